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

    /// <summary>Set by the server on every write; never sent back.</summary>
    internal static bool IsServerManaged(string key) => key is Id or ChangeVector or LastModified;
}
