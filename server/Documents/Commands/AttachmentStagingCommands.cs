namespace Jackdaw.Server.Documents.Commands;

/// <summary>
/// One step of a large upload: writes its chunks into a staged stream, starting the stream (a new
/// id, a staging entry "being written") on the first step. The command may run again in a fresh
/// transaction (see <see cref="IMergedCommand{TTransaction}"/>), so the id is read back each time.
/// </summary>
/// <param name="streamId">The stream of the earlier steps; null for the first step.</param>
/// <param name="firstChunk">The chunk number of the step's first byte.</param>
public sealed class StageAttachmentChunksCommand(long? streamId, int firstChunk, ReadOnlyMemory<byte> data) : IMergedCommand<DocumentsTransaction>
{
    public long StreamId { get; private set; }

    public long EstimatedBytes => data.Length;

    public void Execute(DocumentsTransaction transaction)
    {
        StreamId = streamId ?? transaction.BeginAttachmentStream();
        transaction.WriteAttachmentChunks(StreamId, firstChunk, data.Span);
    }
}

/// <summary>Gives up a staged stream whose upload failed: it becomes an orphan for the clean-up.</summary>
public sealed class AbandonAttachmentStreamCommand(long streamId) : IMergedCommand<DocumentsTransaction>
{
    public void Execute(DocumentsTransaction transaction) => transaction.AbandonAttachmentStream(streamId);
}

/// <summary>Deletes up to <paramref name="maxChunks"/> chunks of orphan streams; <see cref="Remaining"/> says whether more wait.</summary>
public sealed class RemoveAttachmentOrphansCommand(int maxChunks) : IMergedCommand<DocumentsTransaction>
{
    public bool Remaining { get; private set; }

    public int Removed { get; private set; }

    public void Execute(DocumentsTransaction transaction)
    {
        Remaining = transaction.RemoveAttachmentOrphans(maxChunks, out var removed);
        Removed = removed;
    }
}
