using System.Buffers;
using System.Buffers.Binary;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

// Attachment contents: reference counts by hash, staged streams, stream ids.
public partial class DocumentsTransaction
{
    /// <summary>One more reference to <paramref name="source"/>'s content, storing it when it is new.</summary>
    private void AcquireContent(AttachmentSource source)
    {
        if (AttachmentContents.TryGet(source.Hash, out _))
        {
            IncrementContent(source.Hash);
            // The same bytes are stored already: the staged copy is not needed, unless it is the
            // one stored (a source linked twice, as an import does for a content several documents
            // share): only a stream still being written is given up.
            if (source.IsStaged)
            {
                AbandonAttachmentStream(source.StagedStreamId);
            }
            return;
        }
        if (source.IsStored)
        {
            throw new InvalidOperationException($"Attachment content {Convert.ToBase64String(source.Hash)} is no longer stored (the last attachment holding it was deleted meanwhile); it cannot be linked again.");
        }

        long streamId;
        if (source.IsStaged)
        {
            streamId = source.StagedStreamId;
            Span<byte> key = stackalloc byte[AttachmentStreams.StreamKeySize];
            AttachmentStreams.WriteStreamKey(key, streamId);
            if (!AttachmentStaging.TryGet(key, out var state) || state[0] != AttachmentStreams.Writing)
            {
                throw new InvalidOperationException($"The staged attachment stream {streamId} is not being written (it was linked or given up already); the upload cannot be linked.");
            }
            AttachmentStaging.Delete(key);
        }
        else
        {
            streamId = NextStreamId();
            WriteAttachmentChunks(streamId, 0, source.Bytes.Span);
        }
        Span<byte> value = stackalloc byte[3 * sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(value, streamId);
        BinaryPrimitives.WriteInt64LittleEndian(value[8..], source.Size);
        BinaryPrimitives.WriteInt64LittleEndian(value[16..], 1);
        AttachmentContents.Put(source.Hash, value);
    }

    private void IncrementContent(ReadOnlySpan<byte> hash) => AdjustContent(hash, +1);

    private void ReleaseContent(ReadOnlySpan<byte> hash) => AdjustContent(hash, -1);

    private void AdjustContent(ReadOnlySpan<byte> hash, long delta)
    {
        if (!AttachmentContents.TryGet(hash, out var current))
        {
            throw new InvalidDataException($"Attachment content {Convert.ToBase64String(hash)} is referenced but not stored: the attachment trees are inconsistent.");
        }
        Span<byte> value = stackalloc byte[3 * sizeof(long)];
        current.CopyTo(value);
        var count = BinaryPrimitives.ReadInt64LittleEndian(value[16..]) + delta;
        if (count > 0)
        {
            BinaryPrimitives.WriteInt64LittleEndian(value[16..], count);
            AttachmentContents.Put(hash, value);
            return;
        }
        AttachmentContents.Delete(hash);
        OrphanStream(BinaryPrimitives.ReadInt64LittleEndian(value));
    }

    private void OrphanStream(long streamId)
    {
        Span<byte> key = stackalloc byte[AttachmentStreams.StreamKeySize];
        AttachmentStreams.WriteStreamKey(key, streamId);
        AttachmentStaging.Put(key, [AttachmentStreams.Orphan]);
        OrphanedAttachmentStreams = true;
        MarkWritten();
    }

    private long NextStreamId()
    {
        var id = (_meta.TryGet(DocumentsStorage.LastStreamIdKey, out var last) ? BinaryPrimitives.ReadInt64LittleEndian(last) : 0) + 1;
        Span<byte> value = stackalloc byte[sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(value, id);
        _meta.Put(DocumentsStorage.LastStreamIdKey, value);
        return id;
    }
}
