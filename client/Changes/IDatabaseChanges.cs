namespace Jackdaw.Client;

/// <summary>
/// The changes feed of one database (<see cref="DocumentStore.Changes"/>): one WebSocket to
/// <c>/databases/{db}/changes</c>, shared by every observable taken from it. It reconnects with
/// back-off when the connection drops and subscribes again to everything observed; changes made
/// while it was disconnected are not sent again (as RavenDB's).
/// </summary>
public interface IDatabaseChanges : IDisposable
{
    /// <summary>Whether the WebSocket is open now.</summary>
    bool Connected { get; }

    /// <summary>Raised when the connection opens or drops.</summary>
    event EventHandler? ConnectionStatusChanged;

    /// <summary>
    /// Raised with what went wrong: a failed connection attempt, a dropped connection, an error the
    /// server sent (a <see cref="ChangesException"/>, e.g. <c>TooSlow</c>), an observer that threw.
    /// </summary>
    event Action<Exception>? OnError;

    /// <summary>Completes when the connection is open; fails with the error of a connection attempt that failed first.</summary>
    Task<IDatabaseChanges> EnsureConnectedNow();

    IChangesObservable<DocumentChange> ForDocument(string docId);

    IChangesObservable<DocumentChange> ForAllDocuments();

    IChangesObservable<DocumentChange> ForDocumentsStartingWith(string docIdPrefix);

    IChangesObservable<DocumentChange> ForDocumentsInCollection(string collectionName);

    /// <summary>The documents of <typeparamref name="TEntity"/>'s collection (<see cref="DocumentConventions.FindCollectionName"/>).</summary>
    IChangesObservable<DocumentChange> ForDocumentsInCollection<TEntity>();

    /// <summary>Puts and deletes of the attachments of one document (Jackdaw's <c>watch-document-attachments</c>).</summary>
    IChangesObservable<AttachmentChange> ForAttachmentsOfDocument(string docId);

    /// <summary>Puts and deletes of every attachment of the database (Jackdaw's <c>watch-attachments</c>).</summary>
    IChangesObservable<AttachmentChange> ForAllAttachments();

    IChangesObservable<IndexChange> ForIndex(string indexName);

    IChangesObservable<IndexChange> ForAllIndexes();

    /// <summary>The progress (about once a second while it moves) and the final state of one operation (a bulk insert).</summary>
    IChangesObservable<OperationStatusChange> ForOperationId(long operationId);

    IChangesObservable<OperationStatusChange> ForAllOperations();
}
