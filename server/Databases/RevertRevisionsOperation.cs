using System.Text;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Databases;

/// <summary>
/// RavenDB's RevertRevisionsOperation (<c>POST /databases/*/revisions/revert</c>): every document
/// of the database, or of some collections, back to its state at a point in time, as a long-running
/// operation. Every revision is read, newest first (by revision etag), <see cref="ScanStep"/> per
/// read transaction: every document with a revision after the time is a candidate. Candidates are
/// then reverted in batches of <see cref="BatchSize"/>, each its own merged transaction (other
/// writers go on between them): see <see cref="DocumentsTransaction.RevertToTime"/> for what
/// "back" means per document.
/// </summary>
/// <remarks>
/// The scan does not stop at the time minus the window (RavenDB's <c>WindowInSec</c>): a
/// revision's time does not grow with its etag. The first put after revisions are switched on
/// stores the document's earlier version with its old <c>@last-modified</c>, and forced and
/// imported revisions keep theirs, so an old revision can sit between newer ones and stopping at
/// it would miss documents changed after the time. The window is accepted for RavenDB's clients.
/// Each batch decides from the revisions as they are when it runs, so a document changed by
/// another writer after the scan is reverted as well (its change is after the time too). A killed
/// or crashed run leaves a prefix of whole batches. A revert stores new versions: with revisions on,
/// it is itself revisioned and can be reverted.
/// </remarks>
public static class RevertRevisionsOperation
{
    /// <summary>Documents per batch (one merged transaction each).</summary>
    public const int BatchSize = 1024;

    /// <summary>RavenDB's default search window before the point in time.</summary>
    public static readonly TimeSpan DefaultWindow = TimeSpan.FromHours(96);

    private const int ScanStep = 4096;

    /// <summary>Starts the revert; the returned operation runs on in the background.</summary>
    /// <param name="window">RavenDB's <c>WindowInSec</c>; accepted, not used to end the scan (see the remarks).</param>
    /// <param name="collections">The collections to revert (any casing); null or empty for every document.</param>
    public static DatabaseOperation Start(DocumentDatabase database, DateTime time, TimeSpan window, IReadOnlyCollection<string>? collections, Func<Exception, OperationFailure> failureOf)
    {
        var details = new RevertDetails();
        var operation = database.Operations.StartNew(details);
        var filter = collections is { Count: > 0 } ? new HashSet<string>(collections, StringComparer.OrdinalIgnoreCase) : null;
        _ = Task.Run(() => RunAsync(database, time.ToUniversalTime(), filter, details, operation, failureOf));
        return operation;
    }

    private static async Task RunAsync(DocumentDatabase database, DateTime time, HashSet<string>? collections, RevertDetails details, DatabaseOperation operation, Func<Exception, OperationFailure> failureOf)
    {
        var killed = operation.Killed;
        try
        {
            var ids = Candidates(database, time, collections, details, killed);
            using var context = new JsonOperationContext();
            for (var i = 0; i < ids.Count; i += BatchSize)
            {
                killed.ThrowIfCancellationRequested();
                var command = new RevertToTimeCommand(ids.GetRange(i, Math.Min(BatchSize, ids.Count - i)), time, context);
                await database.EnqueueAsync(command).ConfigureAwait(false);
                details.Committed(command.Reverted);
                context.Reset();
            }
            operation.Complete(details.Reverted);
        }
        catch (Exception e)
        {
            var failure = killed.IsCancellationRequested
                ? new Errors.BadRequestException($"Operation {operation.Id} was killed (operations/kill) after reverting {details.Reverted} documents; the batches committed before stay, whole.", e)
                : e;
            operation.Fail(failureOf(failure), details.Reverted);
        }
    }

    /// <summary>
    /// The ids of the documents with a revision after <paramref name="time"/>, newest change first,
    /// each once. Each step is its own snapshot, so a long scan does not keep the store from flushing;
    /// a revision stored meanwhile has a higher etag and is not seen (as it would not be in one snapshot).
    /// </summary>
    private static List<string> Candidates(DocumentDatabase database, DateTime time, HashSet<string>? collections, RevertDetails details, CancellationToken killed)
    {
        var after = time.Ticks;
        var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var ids = new List<string>();
        var before = long.MaxValue;
        while (true)
        {
            killed.ThrowIfCancellationRequested();
            using var reader = database.BeginRead();
            var keys = reader.GetRevisionKeysNewestFirst(before, ScanStep);
            if (keys.Count == 0)
            {
                return ids;
            }
            before = RevisionKeys.EtagOf(keys[^1]);
            foreach (var key in keys)
            {
                if (!reader.TryGetRevisionByKey(key, out var revision))
                {
                    continue;
                }
                details.Scanned();
                if (revision.LastModifiedTicks <= after)
                {
                    continue;
                }
                if (collections is not null && (revision.CollectionUtf8.IsEmpty || !collections.Contains(Encoding.UTF8.GetString(revision.CollectionUtf8))))
                {
                    continue;
                }
                var id = revision.Id;
                if (seen.Add(id))
                {
                    ids.Add(id);
                    details.Found();
                }
            }
        }
    }

    /// <summary>
    /// The counts of a revert, in RavenDB's shape (its <c>RevertResult</c>, both progress and result):
    /// <c>{"ScannedRevisions":n,"ScannedDocuments":n,"RevertedDocuments":n,"Warnings":{}}</c>.
    /// </summary>
    private sealed class RevertDetails : IOperationDetails
    {
        private long _scannedRevisions;
        private long _scannedDocuments;
        private long _reverted;
        private long _version;

        public long Version => Volatile.Read(ref _version);

        public long Reverted => Volatile.Read(ref _reverted);

        public void Scanned()
        {
            Interlocked.Increment(ref _scannedRevisions);
            Interlocked.Increment(ref _version);
        }

        public void Found() => Interlocked.Increment(ref _scannedDocuments);

        public void Committed(int reverted)
        {
            Interlocked.Add(ref _reverted, reverted);
            Interlocked.Increment(ref _version);
        }

        public void WriteProgress(Utf8JsonWriter writer) => Write(writer);

        public void WriteResult(Utf8JsonWriter writer) => Write(writer);

        private void Write(Utf8JsonWriter writer)
        {
            writer.WriteStartObject();
            writer.WriteString("$type"u8, "Raven.Server.Documents.Revisions.RevertResult, Raven.Server");
            writer.WriteNumber("ScannedRevisions"u8, Volatile.Read(ref _scannedRevisions));
            writer.WriteNumber("ScannedDocuments"u8, Volatile.Read(ref _scannedDocuments));
            writer.WriteNumber("RevertedDocuments"u8, Reverted);
            writer.WriteStartObject("Warnings"u8);
            writer.WriteEndObject();
            writer.WriteEndObject();
        }
    }
}
