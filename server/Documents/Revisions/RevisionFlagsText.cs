using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents;

/// <summary>
/// The revisions' flags in <c>@metadata.@flags</c>, a text of names joined by ", " as RavenDB
/// formats its <c>DocumentFlags</c>. The revisions own <c>HasRevisions</c>, <c>Revision</c> and
/// <c>DeleteRevision</c>; every other name (<c>HasAttachments</c>, <c>Artificial</c>, ...) is
/// kept as written. <c>HasRevisions</c> comes first and <c>Revision</c> last, as in RavenDB's
/// order of flag values.
/// </summary>
internal static class RevisionFlagsText
{
    private const string HasRevisions = nameof(DocumentFlags.HasRevisions);
    private const string Revision = nameof(DocumentFlags.Revision);
    private const string DeleteRevision = nameof(DocumentFlags.DeleteRevision);

    /// <summary>The <c>@flags</c> text of a document's body (a Disk-mode blittable), or null when it has none.</summary>
    public static string? Read(ReadOnlySpan<byte> document)
    {
        if (document.IsEmpty)
        {
            return null;
        }
        var root = BlittableReader.Open(document);
        if (!root.TryGet("@metadata"u8, out var metadata) || metadata.Type != BlittableToken.Object)
        {
            return null;
        }
        return metadata.GetObject().TryGet("@flags"u8, out var flags) && flags.Type == BlittableToken.String ? flags.GetString() : null;
    }

    /// <summary>Whether <c>@flags</c> holds <c>Artificial</c> (a map-reduce output document).</summary>
    public static bool IsArtificial(string? flags) =>
        flags is not null && flags.Split(',', StringSplitOptions.TrimEntries).Contains("Artificial");

    /// <summary>
    /// The <c>@flags</c> a revision is shown with, as RavenDB shows them: <c>"HasRevisions, Revision"</c>
    /// with the version's other flags between, or <c>"HasRevisions, DeleteRevision"</c> for a delete.
    /// </summary>
    public static string ForRevision(string? versionFlags, bool deleteRevision) =>
        Compose(versionFlags, hasRevisions: true, deleteRevision, revision: !deleteRevision)!;

    private static string? Compose(string? flags, bool hasRevisions, bool deleteRevision, bool revision)
    {
        var names = new List<string>(4);
        if (hasRevisions)
        {
            names.Add(HasRevisions);
        }
        if (deleteRevision)
        {
            names.Add(DeleteRevision);
        }
        if (flags is not null)
        {
            foreach (var part in flags.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
            {
                if (part is not (HasRevisions or Revision or DeleteRevision) && !names.Contains(part))
                {
                    names.Add(part);
                }
            }
        }
        if (revision)
        {
            names.Add(Revision);
        }
        return names.Count == 0 ? null : string.Join(", ", names);
    }
}
