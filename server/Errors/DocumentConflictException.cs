namespace Jackdaw.Server.Errors;

/// <summary>
/// A read of a document that replication left in conflict (the keep policy): answered 409 with
/// RavenDB's <c>DocumentConflictException</c>; a PUT or DELETE of the id resolves it.
/// </summary>
public sealed class DocumentConflictException : Exception
{
    /// <param name="largestEtag">The etag of the document as this node holds it (0 when it holds none): RavenDB's <c>LargestEtag</c>.</param>
    public DocumentConflictException(string id, int versions, long largestEtag)
        : base($"Conflict detected on '{id}': {versions} concurrent versions were kept. List them with GET /databases/{{db}}/replication/conflicts?docId={Uri.EscapeDataString(id)}, then PUT the resolved document (or DELETE it) to resolve the conflict.")
    {
        DocumentId = id;
        LargestEtag = largestEtag;
    }

    public string DocumentId { get; }

    public long LargestEtag { get; }
}
