using Jackdaw.Client.Attachments;

namespace Jackdaw.Client.Session;

/// <summary><c>session.Advanced.Attachments</c>: queues the writes in the session, sends the reads at once.</summary>
internal sealed class SessionAttachments(AsyncDocumentSession session) : IAttachmentsSessionOperations
{
    public void Store(string documentId, string name, Stream stream, string? contentType = null)
    {
        AttachmentCommands.ThrowIfInvalid(documentId, name);
        ArgumentNullException.ThrowIfNull(stream);
        if (!stream.CanRead)
        {
            throw new ArgumentException($"The stream given for attachment '{name}' of '{documentId}' cannot be read.", nameof(stream));
        }

        session.DeferStore(documentId, name, stream, contentType);
    }

    public void Store(object entity, string name, Stream stream, string? contentType = null) =>
        Store(session.IdOfTracked(entity, "stored"), name, stream, contentType);

    public void Delete(string documentId, string name)
    {
        AttachmentCommands.ThrowIfInvalid(documentId, name);
        session.DeferDelete(documentId, name);
    }

    public void Delete(object entity, string name) => Delete(session.IdOfTracked(entity, "deleted"), name);

    public void Rename(string documentId, string name, string newName) => Move(documentId, name, documentId, newName);

    public void Rename(object entity, string name, string newName)
    {
        var id = session.IdOfTracked(entity, "renamed");
        Move(id, name, id, newName);
    }

    public void Move(string sourceDocumentId, string sourceName, string destinationDocumentId, string destinationName)
    {
        AttachmentCommands.ThrowIfInvalid(sourceDocumentId, sourceName);
        AttachmentCommands.ThrowIfInvalid(destinationDocumentId, destinationName);
        session.DeferMoveOrCopy(DeferredCommand.AttachmentMove, sourceDocumentId, sourceName, destinationDocumentId, destinationName);
    }

    public void Move(object sourceEntity, string sourceName, object destinationEntity, string destinationName) =>
        Move(session.IdOfTracked(sourceEntity, "moved"), sourceName, session.IdOfTracked(destinationEntity, "moved"), destinationName);

    public void Copy(string sourceDocumentId, string sourceName, string destinationDocumentId, string destinationName)
    {
        AttachmentCommands.ThrowIfInvalid(sourceDocumentId, sourceName);
        AttachmentCommands.ThrowIfInvalid(destinationDocumentId, destinationName);
        session.DeferMoveOrCopy(DeferredCommand.AttachmentCopy, sourceDocumentId, sourceName, destinationDocumentId, destinationName);
    }

    public void Copy(object sourceEntity, string sourceName, object destinationEntity, string destinationName) =>
        Copy(session.IdOfTracked(sourceEntity, "copied"), sourceName, session.IdOfTracked(destinationEntity, "copied"), destinationName);

    public AttachmentName[] GetNames(object entity) => session.GetAttachmentNames(entity);

    public async Task<bool> ExistsAsync(string documentId, string name, CancellationToken token = default)
    {
        session.IncrementRequests();
        return await AttachmentCommands.HeadAsync(session.Store.Executor, session.DatabasePath, documentId, name, token).ConfigureAwait(false) is not null;
    }

    public Task<AttachmentResult?> GetAsync(string documentId, string name, CancellationToken token = default) =>
        GetAsync(documentId, name, AttachmentType.Document, null, null, null, token);

    public Task<AttachmentResult?> GetAsync(object entity, string name, CancellationToken token = default) =>
        GetAsync(session.IdOfTracked(entity, "read"), name, token);

    public Task<AttachmentResult?> GetRangeAsync(string documentId, string name, long? from, long? to, CancellationToken token = default) =>
        GetAsync(documentId, name, AttachmentType.Document, null, from, to, token);

    public Task<AttachmentResult?> GetRevisionAsync(string documentId, string name, string changeVector, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(changeVector);
        return GetAsync(documentId, name, AttachmentType.Revision, changeVector, null, null, token);
    }

    public async Task<IAsyncEnumerator<AttachmentEnumeratorResult>> GetAsync(IEnumerable<AttachmentRequest> attachments, CancellationToken token = default)
    {
        session.IncrementRequests();
        return await AttachmentCommands.GetManyAsync(session.Store.Executor, session.DatabasePath, attachments, token).ConfigureAwait(false);
    }

    private Task<AttachmentResult?> GetAsync(string documentId, string name, AttachmentType type, string? changeVector, long? from, long? to, CancellationToken token)
    {
        AttachmentCommands.ThrowIfInvalid(documentId, name);
        session.IncrementRequests();
        return AttachmentCommands.GetAsync(session.Store.Executor, session.DatabasePath, documentId, name, type, changeVector, from, to, token);
    }
}
