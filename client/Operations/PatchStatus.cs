namespace Jackdaw.Client;

/// <summary>What a patch did to its document (RavenDB's names).</summary>
public enum PatchStatus
{
    DocumentDoesNotExist,
    Created,
    Patched,
    Skipped,
    NotModified,
}
