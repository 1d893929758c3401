using System.Buffers.Binary;
using System.Text;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

// Reverting documents to a revision, or to what they were at a time.
public partial class DocumentsTransaction
{
    /// <summary>
    /// Reverts a document to the revision of <paramref name="changeVector"/>: its version becomes the
    /// document again (a new version, and so a new revision where revisions are on); a delete
    /// revision deletes the document. Returns whether the document changed.
    /// </summary>
    /// <exception cref="BadRequestException">No revision of the document has that change vector.</exception>
    public bool RevertToRevision(string id, string changeVector, JsonOperationContext context)
    {
        var revisionKey = Revisions.ByChangeVector.TryGet(Encoding.ASCII.GetBytes(changeVector), out var found) ? found.ToArray() : null;
        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        key = key[..DocumentIds.GetKeyOrThrow(id, key)];
        Span<byte> range = stackalloc byte[RevisionKeys.MaxKeySize];
        range = range[..RevisionKeys.WriteRange(range, key)];
        if (revisionKey is null || !revisionKey.AsSpan().StartsWith(range) || !Revisions.Revisions.TryGet(revisionKey, out var value))
        {
            throw new BadRequestException($"Document '{id}' has no revision of change vector '{changeVector}' to revert to; list its revisions with GET /databases/{{db}}/revisions?id={id}.");
        }
        return RestoreRevision(key, new RevisionRecord(value), context);
    }

    /// <summary>
    /// Reverts a document to its state at <paramref name="time"/> (RevertRevisionsOperation): to its
    /// newest revision from then or before; deleted when it did not exist then (its oldest revision
    /// is its creation, after <paramref name="time"/>) or its revision from then is a delete; to its
    /// oldest revision when the policy removed the older ones. Returns whether the document changed.
    /// </summary>
    public bool RevertToTime(string id, DateTime time, JsonOperationContext context)
    {
        Span<byte> key = stackalloc byte[DocumentIds.MaxKeyBytes];
        key = key[..DocumentIds.GetKeyOrThrow(id, key)];
        Span<byte> range = stackalloc byte[RevisionKeys.MaxKeySize];
        range = range[..RevisionKeys.WriteRange(range, key)];
        var ticks = time.ToUniversalTime().Ticks;
        byte[]? target = null;
        var createdAfter = false;
        using (var iterator = Revisions.Revisions.Iterate())
        {
            Span<byte> last = stackalloc byte[RevisionKeys.MaxKeySize];
            range.CopyTo(last);
            StorageKeys.WriteEtag(last[range.Length..], long.MaxValue);
            if (!iterator.SeekLastLessOrEqual(last[..(range.Length + StorageKeys.EtagSize)]) || !iterator.Key.StartsWith(range))
            {
                return false;
            }
            do
            {
                if (!iterator.Key.StartsWith(range))
                {
                    break;
                }
                var revision = new RevisionRecord(iterator.Value);
                target = iterator.Key.ToArray();
                createdAfter = revision.Origin == RevisionOrigin.Created;
                if (revision.LastModifiedTicks <= ticks)
                {
                    createdAfter = false;
                    break;
                }
            }
            while (iterator.MovePrev());
        }
        if (target is null)
        {
            return false;
        }
        if (createdAfter)
        {
            return Delete(id, expectedChangeVector: null);
        }
        Revisions.Revisions.TryGet(target, out var value);
        return RestoreRevision(key, new RevisionRecord(value), context);
    }

    /// <summary>
    /// Makes a revision's version the document again, with the attachments it lists (or deletes it,
    /// for a delete revision); false when it is that version already.
    /// </summary>
    private bool RestoreRevision(ReadOnlySpan<byte> key, RevisionRecord revision, JsonOperationContext context)
    {
        var id = revision.Id;
        if (revision.IsDeleteRevision)
        {
            return Delete(id, expectedChangeVector: null);
        }
        if (_docs.TryGet(key, out var current) && new DocumentRecord(current).ChangeVectorOr(_databaseId) == revision.ChangeVector)
        {
            return false;
        }
        // Copied before the first write: the record's spans die with it.
        var document = revision.Document.ToArray();
        var collection = revision.Collection;
        RestoreAttachmentsOf(key.ToArray(), document);
        _restoringRevision = true;
        try
        {
            Put(id, document, collection, expectedChangeVector: null, context);
        }
        finally
        {
            _restoringRevision = false;
        }
        return true;
    }
}
