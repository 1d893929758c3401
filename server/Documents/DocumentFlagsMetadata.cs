using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents;

/// <summary>
/// <c>@metadata.@flags</c> as a put stamps it: the flags the server decides (<see cref="ServerFlags"/>:
/// whether the document has attachments, revisions) are the truth whatever the body sent; other
/// names a body sends (<c>Artificial</c>, <c>FromIndex</c>) are kept as written, after the server's.
/// RavenDB's format: names joined by ", " (<c>"HasRevisions, HasAttachments"</c>); no <c>@flags</c> when empty.
/// </summary>
public static class DocumentFlagsMetadata
{
    /// <summary>The flags only the server sets on a document.</summary>
    public const DocumentFlags ServerFlags = DocumentFlags.HasRevisions | DocumentFlags.HasAttachments;

    /// <summary>Sets (or removes) <c>@flags</c> in <paramref name="metadata"/>, the patch of the body <paramref name="document"/>'s <c>@metadata</c>.</summary>
    public static void Stamp(ReadOnlySpan<byte> document, BlittablePatch metadata, DocumentFlags serverFlags)
    {
        var sent = BodyFlags(document);
        if (sent is null && serverFlags == DocumentFlags.None)
        {
            return;
        }
        var names = new List<string>();
        if (serverFlags != DocumentFlags.None)
        {
            foreach (var flag in Enum.GetValues<DocumentFlags>())
            {
                if (flag != DocumentFlags.None && (ServerFlags & flag) != 0 && serverFlags.HasFlag(flag))
                {
                    names.Add(flag.ToString());
                }
            }
        }
        if (sent is not null)
        {
            foreach (var part in sent.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            {
                // A revision's own flags are never a document's (a revision put back as a document sheds them).
                var isServers = Enum.TryParse<DocumentFlags>(part, ignoreCase: true, out var flag) && ((ServerFlags | DocumentFlags.Revision | DocumentFlags.DeleteRevision) & flag) != 0;
                if (!isServers && !names.Contains(part, StringComparer.OrdinalIgnoreCase))
                {
                    names.Add(part);
                }
            }
        }
        if (names.Count == 0)
        {
            metadata.Remove("@flags");
        }
        else
        {
            metadata.Set("@flags", string.Join(", ", names));
        }
    }

    /// <summary>Whether the body's <c>@metadata</c> has the property <paramref name="utf8Name"/>.</summary>
    public static bool BodyHasMetadataProperty(ReadOnlySpan<byte> document, ReadOnlySpan<byte> utf8Name)
    {
        var root = BlittableReader.Open(document);
        return root.TryGet("@metadata"u8, out var metadata) && metadata.Type == BlittableToken.Object && metadata.GetObject().TryGet(utf8Name, out _);
    }

    /// <summary>The body's <c>@flags</c> string; null when it sends none (or not a string).</summary>
    private static string? BodyFlags(ReadOnlySpan<byte> document)
    {
        var root = BlittableReader.Open(document);
        if (!root.TryGet("@metadata"u8, out var metadata) || metadata.Type != BlittableToken.Object)
        {
            return null;
        }
        return metadata.GetObject().TryGet("@flags"u8, out var flags) && flags.Type == BlittableToken.String ? flags.GetString() : null;
    }
}
