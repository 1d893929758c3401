namespace Jackdaw.Server.Documents;

/// <summary>
/// One attachment of a document, as <c>@metadata.@attachments</c> lists it: its name as written, the
/// base64 of its SHA-256 (44 characters, RavenDB's <c>Hash</c>), its content type and size in bytes.
/// <see cref="Etag"/> is the etag of its last put (its change vector is that etag's).
/// </summary>
public sealed record AttachmentInfo(string Name, string Hash, string ContentType, long Size)
{
    public long Etag { get; init; }
}
