namespace Jackdaw.Client;

/// <summary>Names of the metadata properties the server and the client use.</summary>
public static class MetadataKeys
{
    public const string Metadata = "@metadata";
    public const string Id = "@id";
    public const string ChangeVector = "@change-vector";
    public const string LastModified = "@last-modified";
    public const string Collection = "@collection";
    public const string ClrType = "Jackdaw-Clr-Type";

    /// <summary>The document's attachments: <c>[{"Name","Hash","ContentType","Size"}]</c>, kept by the server.</summary>
    public const string Attachments = "@attachments";

    /// <summary>Server flags: <c>"HasAttachments, HasRevisions"</c>; a revision's say <c>Revision</c> (and <c>DeleteRevision</c>).</summary>
    public const string Flags = "@flags";

    /// <summary>Set by the server on every write; never sent back.</summary>
    internal static bool IsServerManaged(string key) => key is Id or ChangeVector or LastModified;
}
