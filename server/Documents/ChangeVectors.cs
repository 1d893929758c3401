using System.Buffers.Text;

namespace Jackdaw.Server.Documents;

/// <summary>
/// A document's change vector, <c>A:{etag}-{database id}</c> as RavenDB writes a single-node one: the
/// etag of its last change and the id of the database that made it. It is also the document's
/// HTTP <c>ETag</c>, in quotes.
/// </summary>
public static class ChangeVectors
{
    public static string Format(long etag, string databaseId) => $"A:{etag}-{databaseId}";

    /// <summary>The change vector in double quotes, as an ETag header value, in one allocation.</summary>
    public static string FormatQuoted(long etag, string databaseId) => $"\"A:{etag}-{databaseId}\"";

    /// <summary>Writes the change vector as UTF-8 (no quotes), without a string.</summary>
    public static void Write(System.Buffers.IBufferWriter<byte> output, long etag, string databaseId)
    {
        var span = output.GetSpan(3 + 20 + System.Text.Encoding.UTF8.GetMaxByteCount(databaseId.Length));
        "A:"u8.CopyTo(span);
        Utf8Formatter.TryFormat(etag, span[2..], out var digits);
        span[2 + digits] = (byte)'-';
        var written = System.Text.Encoding.UTF8.GetBytes(databaseId, span[(3 + digits)..]);
        output.Advance(3 + digits + written);
    }

    /// <summary>Parses a change vector, tolerating the quotes and <c>W/</c> of an HTTP header value.</summary>
    public static bool TryParse(ReadOnlySpan<char> text, out long etag, out ReadOnlySpan<char> databaseId)
    {
        etag = 0;
        databaseId = default;
        text = text.Trim();
        if (text.StartsWith("W/", StringComparison.Ordinal))
            text = text[2..];
        if (text.Length >= 2 && text[0] == '"' && text[^1] == '"')
            text = text[1..^1];
        if (!text.StartsWith("A:", StringComparison.Ordinal))
            return false;
        text = text[2..];
        var dash = text.IndexOf('-');
        if (dash <= 0 || !long.TryParse(text[..dash], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out etag) || etag <= 0)
            return false;
        databaseId = text[(dash + 1)..];
        return !databaseId.IsEmpty;
    }

    /// <summary>Whether an HTTP <c>If-Match</c>/<c>If-None-Match</c> value names <paramref name="changeVector"/>.</summary>
    public static bool Matches(ReadOnlySpan<char> headerValue, ReadOnlySpan<char> changeVector)
    {
        foreach (var range in headerValue.Split(','))
        {
            var candidate = headerValue[range].Trim();
            if (candidate is "*")
                return true;
            if (candidate.StartsWith("W/", StringComparison.Ordinal))
                candidate = candidate[2..];
            if (candidate.Length >= 2 && candidate[0] == '"' && candidate[^1] == '"')
                candidate = candidate[1..^1];
            if (candidate.SequenceEqual(changeVector))
                return true;
        }
        return false;
    }

    /// <summary>A new database id: 22 characters of URL-safe base64 from a random GUID.</summary>
    public static string NewDatabaseId()
    {
        Span<byte> bytes = stackalloc byte[16];
        Guid.NewGuid().TryWriteBytes(bytes);
        return Base64Url.EncodeToString(bytes);
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
            utc = DateTime.SpecifyKind(utc.ToUniversalTime(), DateTimeKind.Utc);
        if (!Utf8Formatter.TryFormat(utc, destination, out var written, new System.Buffers.StandardFormat('O')))
            throw new ArgumentException($"The destination needs {Length} bytes.", nameof(destination));
        return written;
    }
}
