using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Replication;

// What travels with the documents: their attachments (and the contents the destination may lack) and the revisions feed.
public static partial class ReplicationFeed
{
    /// <summary>
    /// The next batch for a destination: the documents and tombstones after <paramref name="afterEtag"/>
    /// (<see cref="Read(DocumentsReader, long, int, long, Func{string, bool}, out int)"/>, leaving out what <paramref name="leaveOut"/> accepts), each document with its attachments,
    /// the revisions and revision tombstones after <paramref name="afterRevisionEtag"/>, and the attachment contents the
    /// destination may lack, each once: a document's whose entry changed after
    /// <paramref name="afterEtag"/> (one the destination had before came to it with an earlier
    /// version) and a revision's, unless this connection sent it already
    /// (<paramref name="sentContents"/>, which this adds to); with <paramref name="allContents"/>
    /// every content listed that this node stores. Contents count in the byte budget: a batch stops
    /// before the item after the one that passes it.
    /// </summary>
    public static ReplicationBatch Read(DocumentsReader reader, long afterEtag, long afterRevisionEtag, ISet<string> sentContents, bool allContents, int maxItems, long maxBytes,
        Func<string, bool>? leaveOut, out int leftOut)
    {
        var documents = Read(reader, afterEtag, maxItems, maxBytes, leaveOut, out leftOut);
        var contents = new List<ReplicatedContent>();
        var inBatch = new HashSet<string>(StringComparer.Ordinal);
        long bytes = 0;

        void Add(string hash, long size)
        {
            if (inBatch.Add(hash))
            {
                contents.Add(new ReplicatedContent(Convert.FromBase64String(hash), size));
                sentContents.Add(hash);
                bytes += size;
            }
        }

        var items = new List<ReplicationItem>(documents.Items.Count);
        var lastEtag = documents.LastEtag;
        foreach (var item in documents.Items)
        {
            if (items.Count > 0 && bytes >= maxBytes)
            {
                lastEtag = items[^1].Etag;
                break;
            }
            bytes += item.Document.Length + 64;
            if (item.IsTombstone)
            {
                items.Add(item);
                continue;
            }
            var attachments = AttachmentsMetadata.Read(item.Document).Count == 0 ? [] : reader.GetAttachments(item.Id);
            foreach (var attachment in attachments)
            {
                if (allContents || (attachment.Etag > afterEtag && !sentContents.Contains(attachment.Hash)))
                {
                    Add(attachment.Hash, attachment.Size);
                }
            }
            items.Add(item with { Attachments = attachments });
        }

        var revisions = new List<ReplicatedRevision>();
        // Revision tombstones share the revisions' etags: the two lists are one feed, neither read
        // past where the other was cut.
        var tombstones = reader.GetRevisionTombstonesAfter(afterRevisionEtag, maxItems);
        var tombstoneLimit = tombstones.Count == maxItems ? tombstones[^1].Etag : long.MaxValue;
        var lastRevisionEtag = Math.Max(afterRevisionEtag, reader.LastRevisionEtag);
        var keys = reader.GetRevisionKeysAfter(afterRevisionEtag, maxItems);
        var cut = false;
        foreach (var key in keys)
        {
            if (!reader.TryGetRevisionByKey(key, out var revision))
            {
                continue;
            }
            if (revision.Etag > tombstoneLimit)
            {
                lastRevisionEtag = tombstoneLimit;
                cut = true;
                break;
            }
            if ((items.Count > 0 || revisions.Count > 0) && bytes >= maxBytes)
            {
                lastRevisionEtag = revisions.Count > 0 ? revisions[^1].Etag : afterRevisionEtag;
                cut = true;
                break;
            }
            revisions.Add(new ReplicatedRevision(revision.Etag, revision.Id, revision.Collection, revision.ChangeVector, revision.LastModifiedTicks, revision.Flags, revision.Document.ToArray()));
            bytes += revision.Document.Length + 64;
            foreach (var listed in AttachmentsMetadata.Read(revision.Document))
            {
                if ((allContents || !sentContents.Contains(listed.Hash)) && !inBatch.Contains(listed.Hash) && reader.GetAttachmentContent(listed.Hash) is { } stored)
                {
                    Add(listed.Hash, stored.Size);
                }
            }
        }
        if (!cut && keys.Count == maxItems && revisions.Count > 0)
        {
            lastRevisionEtag = revisions[^1].Etag;
        }
        if (!cut)
        {
            lastRevisionEtag = Math.Min(lastRevisionEtag, tombstoneLimit);
        }
        tombstones.RemoveAll(t => t.Etag > lastRevisionEtag);
        return new ReplicationBatch(lastEtag, items, lastRevisionEtag, revisions, contents, allContents, tombstones);
    }
}
