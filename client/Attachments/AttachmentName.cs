namespace Jackdaw.Client;

/// <summary>
/// One entry of a document's <c>@metadata.@attachments</c> (RavenDB's <c>AttachmentName</c>): the
/// attachment's name, the base64 SHA-256 of its bytes, its content type and its size in bytes.
/// </summary>
public class AttachmentName
{
    public string Name { get; init; } = "";

    public string Hash { get; init; } = "";

    public string ContentType { get; init; } = "";

    public long Size { get; init; }
}
