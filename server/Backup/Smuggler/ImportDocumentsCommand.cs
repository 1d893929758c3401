using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>One attachment a dump's document lists, with the content it links (staged, in memory or already stored).</summary>
internal sealed record ImportedAttachment(string Name, string ContentType, AttachmentSource Source);

/// <summary>
/// A dump's document ready to store: its put, and when the import takes attachments, the complete
/// list of the attachments it has in the dump (null when attachments are not imported: the
/// document's stored attachments, if any, are left as they are).
/// </summary>
internal sealed record ImportedDocument(DocumentToPut Put, IReadOnlyList<ImportedAttachment>? Attachments)
{
    public string Id => Put.Id;
}

/// <summary>
/// A batch of a dump's documents in one transaction, all or none: each put, then its attachments
/// made what the dump lists, through the attachments API (<see cref="DocumentsTransaction.PutAttachment"/>:
/// contents deduplicated by hash, <c>@metadata.@attachments</c> rewritten by the server). An
/// attachment already stored with the same name, hash and content type is left alone; one the
/// dump does not list is deleted (the dump's document is the version to restore). Each change of
/// an attachment stores the document again, as any attachment change does.
/// </summary>
internal sealed class ImportDocumentsCommand(IReadOnlyList<ImportedDocument> documents, JsonOperationContext context) : IMergedCommand<DocumentsTransaction>
{
    public long EstimatedBytes { get; } = documents.Sum(d => d.Put.Document.Length + (d.Attachments?.Sum(a => (long)a.Source.Bytes.Length) ?? 0));

    public void Execute(DocumentsTransaction transaction)
    {
        foreach (var document in documents)
        {
            var put = document.Put;
            transaction.Put(put.Id, put.Document.Span, put.Collection, expectedChangeVector: null, context);
            if (document.Attachments is { } attachments)
            {
                Synchronize(transaction, put.Id, attachments);
            }
        }
    }

    private void Synchronize(DocumentsTransaction transaction, string id, IReadOnlyList<ImportedAttachment> attachments)
    {
        var stored = transaction.GetAttachments(id);
        foreach (var old in stored)
        {
            if (!attachments.Any(a => string.Equals(a.Name, old.Name, StringComparison.OrdinalIgnoreCase)))
            {
                transaction.DeleteAttachment(id, old.Name, expectedChangeVector: null, context);
            }
        }
        foreach (var attachment in attachments)
        {
            var current = stored.Find(s => string.Equals(s.Name, attachment.Name, StringComparison.OrdinalIgnoreCase));
            if (current is not null && current.Name == attachment.Name && current.ContentType == attachment.ContentType
                && current.Hash == Convert.ToBase64String(attachment.Source.Hash))
            {
                continue;
            }
            transaction.PutAttachment(id, attachment.Name, attachment.ContentType, attachment.Source, expectedChangeVector: null, context);
        }
    }
}
