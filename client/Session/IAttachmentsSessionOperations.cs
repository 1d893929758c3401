namespace Jackdaw.Client;

/// <summary>
/// The attachments of documents, through a session (<c>session.Advanced.Attachments</c>, RavenDB's
/// <c>IAttachmentsSessionOperationsAsync</c>). Store, Delete, Rename, Move and Copy are queued and
/// sent with the session's other changes by <see cref="IAsyncDocumentSession.SaveChangesAsync"/>, in
/// the same transaction; reads are requests of their own. Names are compared ignoring case, as the
/// server does.
/// </summary>
public interface IAttachmentsSessionOperations
{
    /// <summary>
    /// Queues storing <paramref name="stream"/>'s bytes (from its position now) as attachment
    /// <paramref name="name"/> of the document, replacing one of that name. The bytes are read only
    /// at the save, streamed into the request after its commands (never held whole); keep the stream
    /// open until then. The session does not dispose it, and a stream is stored once per session.
    /// </summary>
    void Store(string documentId, string name, Stream stream, string? contentType = null);

    /// <summary>As <see cref="Store(string, string, Stream, string?)"/>, for a document the session tracks.</summary>
    void Store(object entity, string name, Stream stream, string? contentType = null);

    /// <summary>Queues deleting the attachment (nothing happens if the document has none of that name).</summary>
    void Delete(string documentId, string name);

    void Delete(object entity, string name);

    /// <summary>Queues renaming an attachment of a document (a move within it).</summary>
    void Rename(string documentId, string name, string newName);

    void Rename(object entity, string name, string newName);

    /// <summary>Queues moving an attachment to another document (or name), replacing one of that name there.</summary>
    void Move(string sourceDocumentId, string sourceName, string destinationDocumentId, string destinationName);

    void Move(object sourceEntity, string sourceName, object destinationEntity, string destinationName);

    /// <summary>Queues copying an attachment to another document (or name); the bytes are stored once, whatever the copies.</summary>
    void Copy(string sourceDocumentId, string sourceName, string destinationDocumentId, string destinationName);

    void Copy(object sourceEntity, string sourceName, object destinationEntity, string destinationName);

    /// <summary>
    /// The attachments of a tracked entity, as its <c>@metadata.@attachments</c> lists them: as
    /// loaded, then as this session's saves changed them. No request.
    /// </summary>
    AttachmentName[] GetNames(object entity);

    /// <summary>Whether the document has an attachment of that name (a <c>HEAD</c> request).</summary>
    Task<bool> ExistsAsync(string documentId, string name, CancellationToken token = default);

    /// <summary>
    /// The attachment, its bytes streamed from the server as <see cref="AttachmentResult.Stream"/> is
    /// read; null when the document or the attachment does not exist. Dispose the result.
    /// </summary>
    Task<AttachmentResult?> GetAsync(string documentId, string name, CancellationToken token = default);

    Task<AttachmentResult?> GetAsync(object entity, string name, CancellationToken token = default);

    /// <summary>
    /// Bytes <paramref name="from"/> to <paramref name="to"/> (inclusive; null: to the end) of the
    /// attachment, as an HTTP range request; null when it does not exist.
    /// </summary>
    Task<AttachmentResult?> GetRangeAsync(string documentId, string name, long? from, long? to, CancellationToken token = default);

    /// <summary>
    /// Several attachments in one request, in the order asked. Each item's stream is valid until the
    /// enumeration moves on. RavenDB's client answers a synchronous enumerator over the network
    /// stream; this one is asynchronous. Dispose it to end the response. A missing document or
    /// attachment fails the request.
    /// </summary>
    Task<IAsyncEnumerator<AttachmentEnumeratorResult>> GetAsync(IEnumerable<AttachmentRequest> attachments, CancellationToken token = default);

    /// <summary>An attachment as a revision of its document kept it, named by the revision's change vector; null when there is none.</summary>
    Task<AttachmentResult?> GetRevisionAsync(string documentId, string name, string changeVector, CancellationToken token = default);
}
