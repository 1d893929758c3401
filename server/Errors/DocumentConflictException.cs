namespace Jackdaw.Server.Errors;

/// <summary>
/// A read of a document that replication left in conflict (the keep policy): answered 409 with
/// RavenDB's <c>DocumentConflictException</c>; a PUT or DELETE of the id resolves it.
/// </summary>
public sealed class DocumentConflictException : Exception
{
    public DocumentConflictException(string id, int versions)
        : base($"Conflict detected on '{id}': {versions} concurrent versions were kept. List them with GET /databases/{{db}}/replication/conflicts?docId={Uri.EscapeDataString(id)}, then PUT the resolved document (or DELETE it) to resolve the conflict.")
    {
        DocumentId = id;
    }

    public string DocumentId { get; }
}
