using System.Buffers;
using System.Buffers.Text;
using System.Globalization;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Documents;

/// <summary>
/// Change vectors, RavenDB's form: entries <c>{tag}:{etag}-{database id}</c> joined by <c>", "</c>
/// (<c>A:120-dbidA, B:45-dbidB</c>), one per copy of the database that changed the document (each
/// node's copy has its own database id). A single-node database writes one entry
/// (<c>A:5-dbid</c>), which is also how every document written before replication looks. The
/// entries are kept sorted (by tag, then database id), so that two nodes that merge the same
/// entries write the same text. A change vector in quotes is the document's HTTP <c>ETag</c>.
/// </summary>
public static class ChangeVectors
{
    /// <summary>The tag of every change vector written before node tags were configurable.</summary>
    public const string DefaultTag = "A";

    public static string Format(string tag, long etag, string databaseId) =>
        string.Create(CultureInfo.InvariantCulture, $"{tag}:{etag}-{databaseId}");

    /// <summary>The change vector in double quotes, as an ETag header value.</summary>
    public static string Quote(string changeVector) => string.Concat("\"", changeVector, "\"");

    /// <summary>
    /// The change vector of a local write at <paramref name="etag"/>: the previous version's
    /// (<paramref name="previous"/>, null for a new document) with this copy's entry set to the etag.
    /// </summary>
    public static string Update(string? previous, string tag, long etag, string databaseId)
    {
        if (string.IsNullOrEmpty(previous) || IsSingleEntryOf(previous, databaseId))
        {
            return Format(tag, etag, databaseId);
        }
        var entries = Parse(previous);
        entries.RemoveAll(e => e.DatabaseId == databaseId);
        entries.Add(new ChangeVectorEntry(tag, etag, databaseId));
        return ToText(entries);
    }

    /// <summary>The entries of both, each database id at its higher etag, in the canonical order.</summary>
    public static string Merge(string? first, string? second)
    {
        if (string.IsNullOrEmpty(first))
        {
            return second ?? "";
        }
        if (string.IsNullOrEmpty(second) || first == second)
        {
            return first;
        }
        var merged = new Dictionary<string, ChangeVectorEntry>(StringComparer.Ordinal);
        foreach (var entry in Parse(first).Concat(Parse(second)))
        {
            if (!merged.TryGetValue(entry.DatabaseId, out var known) || known.Etag < entry.Etag)
            {
                merged[entry.DatabaseId] = entry;
            }
        }
        return ToText([.. merged.Values]);
    }

    /// <summary>How <paramref name="first"/> stands to <paramref name="second"/>; a missing entry counts as etag 0.</summary>
    public static ChangeVectorOrder Compare(string first, string second)
    {
        if (first == second)
        {
            return ChangeVectorOrder.Equal;
        }
        var a = ToDictionary(first);
        var b = ToDictionary(second);
        var firstHigher = a.Any(e => e.Value > b.GetValueOrDefault(e.Key));
        var secondHigher = b.Any(e => e.Value > a.GetValueOrDefault(e.Key));
        return (firstHigher, secondHigher) switch
        {
            (false, false) => ChangeVectorOrder.Equal,
            (true, false) => ChangeVectorOrder.Newer,
            (false, true) => ChangeVectorOrder.Older,
            _ => ChangeVectorOrder.Conflict,
        };
    }

    /// <summary>The etag of <paramref name="databaseId"/>'s entry, 0 when it has none.</summary>
    public static long EtagOf(string changeVector, string databaseId)
    {
        foreach (var entry in Parse(changeVector))
        {
            if (entry.DatabaseId == databaseId)
            {
                return entry.Etag;
            }
        }
        return 0;
    }

    /// <summary>The entries of a change vector (quotes and <c>W/</c> of a header value tolerated).</summary>
    /// <exception cref="FormatException">An entry is not <c>{tag}:{etag}-{database id}</c>.</exception>
    public static List<ChangeVectorEntry> Parse(ReadOnlySpan<char> text)
    {
        var entries = new List<ChangeVectorEntry>();
        text = Unquote(text);
        foreach (var range in text.Split(','))
        {
            var part = text[range].Trim();
            if (part.IsEmpty)
            {
                continue;
            }
            if (!TryParseEntry(part, out var entry))
            {
                throw new FormatException($"'{part}' is not a change vector entry such as A:12-{{database id}}.");
            }
            entries.Add(entry);
        }
        return entries;
    }

    /// <summary>Parses a single-entry change vector (any tag), tolerating the quotes and <c>W/</c> of an HTTP header value.</summary>
    public static bool TryParse(ReadOnlySpan<char> text, out long etag, out ReadOnlySpan<char> databaseId)
    {
        etag = 0;
        databaseId = default;
        text = Unquote(text);
        var colon = text.IndexOf(':');
        if (colon <= 0 || text.Contains(','))
        {
            return false;
        }
        text = text[(colon + 1)..];
        var dash = text.IndexOf('-');
        if (dash <= 0 || !long.TryParse(text[..dash], NumberStyles.None, CultureInfo.InvariantCulture, out etag) || etag <= 0)
        {
            return false;
        }
        databaseId = text[(dash + 1)..];
        return !databaseId.IsEmpty;
    }

    /// <summary>Whether an HTTP <c>If-Match</c>/<c>If-None-Match</c> value names <paramref name="changeVector"/>.</summary>
    public static bool Matches(ReadOnlySpan<char> headerValue, ReadOnlySpan<char> changeVector)
    {
        // A change vector holds commas itself: the whole value as one first, then a list of
        // quoted values (each may be W/), or of bare ones when there are no quotes.
        var whole = Unquote(headerValue);
        if (whole is "*" || whole.SequenceEqual(changeVector))
        {
            return true;
        }
        if (headerValue.Contains('"'))
        {
            var rest = headerValue;
            while (rest.IndexOf('"') is var open and >= 0)
            {
                rest = rest[(open + 1)..];
                var close = rest.IndexOf('"');
                if (close < 0)
                {
                    return false;
                }
                var candidate = rest[..close];
                if (candidate is "*" || candidate.SequenceEqual(changeVector))
                {
                    return true;
                }
                rest = rest[(close + 1)..];
            }
            return ContainsBareStar(headerValue);
        }
        foreach (var range in headerValue.Split(','))
        {
            var candidate = headerValue[range].Trim();
            if (candidate.StartsWith("W/", StringComparison.Ordinal))
            {
                candidate = candidate[2..];
            }
            if (candidate is "*" || candidate.SequenceEqual(changeVector))
            {
                return true;
            }
        }
        return false;
    }

    private static bool ContainsBareStar(ReadOnlySpan<char> headerValue)
    {
        foreach (var range in headerValue.Split(','))
        {
            if (headerValue[range].Trim() is "*")
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>A document's change vector, read from its stamped <c>@metadata.@change-vector</c>; null when it has none.</summary>
    public static string? Of(ReadOnlySpan<byte> document)
    {
        var root = BlittableReader.Open(document);
        if (!root.TryGet("@metadata"u8, out var metadata) || metadata.Type != BlittableToken.Object)
        {
            return null;
        }
        return metadata.GetObject().TryGet("@change-vector"u8, out var value) && value.Type == BlittableToken.String ? value.GetString() : null;
    }

    /// <summary>Writes a document's change vector (its stamped <c>@metadata.@change-vector</c>) as UTF-8, without quotes.</summary>
    public static void WriteOf(IBufferWriter<byte> output, ReadOnlySpan<byte> document)
    {
        var root = BlittableReader.Open(document);
        if (root.TryGet("@metadata"u8, out var metadata) && metadata.Type == BlittableToken.Object
            && metadata.GetObject().TryGet("@change-vector"u8, out var value) && value.Type == BlittableToken.String)
        {
            if (value.TryGetRawUtf8(out var raw))
            {
                output.Write(raw);
                return;
            }
            var length = value.GetUtf8Length();
            value.TryGetUtf8(output.GetSpan(length), out var written);
            output.Advance(written);
        }
    }

    /// <summary>A new database id: 22 characters of URL-safe base64 from a random GUID.</summary>
    public static string NewDatabaseId()
    {
        Span<byte> bytes = stackalloc byte[16];
        Guid.NewGuid().TryWriteBytes(bytes);
        return Base64Url.EncodeToString(bytes);
    }

    private static ReadOnlySpan<char> Unquote(ReadOnlySpan<char> text)
    {
        text = text.Trim();
        if (text.StartsWith("W/", StringComparison.Ordinal))
        {
            text = text[2..];
        }
        if (text.Length >= 2 && text[0] == '"' && text[^1] == '"')
        {
            text = text[1..^1];
        }
        return text;
    }

    private static bool TryParseEntry(ReadOnlySpan<char> part, out ChangeVectorEntry entry)
    {
        entry = default;
        var colon = part.IndexOf(':');
        if (colon <= 0)
        {
            return false;
        }
        var rest = part[(colon + 1)..];
        var dash = rest.IndexOf('-');
        if (dash <= 0 || !long.TryParse(rest[..dash], NumberStyles.None, CultureInfo.InvariantCulture, out var etag) || rest.Length == dash + 1)
        {
            return false;
        }
        entry = new ChangeVectorEntry(part[..colon].ToString(), etag, rest[(dash + 1)..].ToString());
        return true;
    }

    private static bool IsSingleEntryOf(string changeVector, string databaseId) =>
        changeVector.EndsWith(databaseId, StringComparison.Ordinal) && !changeVector.Contains(',')
        && changeVector.Length > databaseId.Length && changeVector[^(databaseId.Length + 1)] == '-';

    private static Dictionary<string, long> ToDictionary(string changeVector)
    {
        var result = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var entry in Parse(changeVector))
        {
            result[entry.DatabaseId] = Math.Max(entry.Etag, result.GetValueOrDefault(entry.DatabaseId));
        }
        return result;
    }

    private static string ToText(List<ChangeVectorEntry> entries)
    {
        entries.Sort(static (x, y) =>
        {
            var byTag = string.CompareOrdinal(x.Tag, y.Tag);
            return byTag != 0 ? byTag : string.CompareOrdinal(x.DatabaseId, y.DatabaseId);
        });
        return string.Join(", ", entries);
    }
}

/// <summary>Formats <c>@last-modified</c>: ISO 8601 UTC with 7 fraction digits, without <c>DateTime.ToString</c>.</summary>
public static class Timestamps
{
    /// <summary>The length of <c>2026-11-22T14:05:09.1234567Z</c>.</summary>
    public const int Length = 28;

    public static int Format(DateTime utc, Span<byte> destination)
    {
        if (utc.Kind != DateTimeKind.Utc)
        {
            utc = DateTime.SpecifyKind(utc.ToUniversalTime(), DateTimeKind.Utc);
        }
        if (!Utf8Formatter.TryFormat(utc, destination, out var written, new System.Buffers.StandardFormat('O')))
        {
            throw new ArgumentException($"The destination needs {Length} bytes.", nameof(destination));
        }
        return written;
    }
}
