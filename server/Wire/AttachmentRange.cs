using System.Globalization;

namespace Jackdaw.Server.Wire;

/// <summary>
/// The <c>Range</c> header of an attachment GET (RFC 9110 §14): one byte range, <c>bytes=a-b</c>,
/// <c>bytes=a-</c> or the suffix <c>bytes=-n</c>. Several ranges, or a header that is not a byte
/// range, are ignored (the whole content is sent, as the RFC allows); a range that starts past the
/// end is unsatisfiable (416).
/// </summary>
public static class AttachmentRange
{
    public enum Outcome
    {
        /// <summary>No usable range: send the whole content (200).</summary>
        Whole,

        /// <summary>Send bytes from..to, both inclusive (206).</summary>
        Satisfiable,

        /// <summary>The range lies outside the content (416).</summary>
        Unsatisfiable,
    }

    public static Outcome Parse(string? header, long size, out long from, out long to)
    {
        from = 0;
        to = size - 1;
        if (string.IsNullOrWhiteSpace(header))
        {
            return Outcome.Whole;
        }
        var value = header.AsSpan().Trim();
        if (!value.StartsWith("bytes=", StringComparison.OrdinalIgnoreCase))
        {
            return Outcome.Whole;
        }
        value = value["bytes=".Length..].Trim();
        if (value.Contains(','))
        {
            return Outcome.Whole;
        }
        var dash = value.IndexOf('-');
        if (dash < 0)
        {
            return Outcome.Whole;
        }
        var first = value[..dash].Trim();
        var last = value[(dash + 1)..].Trim();
        const NumberStyles digits = NumberStyles.None;
        if (first.IsEmpty)
        {
            // The last n bytes.
            if (!long.TryParse(last, digits, CultureInfo.InvariantCulture, out var suffix))
            {
                return Outcome.Whole;
            }
            if (suffix == 0 || size == 0)
            {
                return Outcome.Unsatisfiable;
            }
            from = Math.Max(0, size - suffix);
            to = size - 1;
            return Outcome.Satisfiable;
        }
        if (!long.TryParse(first, digits, CultureInfo.InvariantCulture, out from))
        {
            return Outcome.Whole;
        }
        if (last.IsEmpty)
        {
            to = size - 1;
        }
        else if (!long.TryParse(last, digits, CultureInfo.InvariantCulture, out to) || to < from)
        {
            from = 0;
            to = size - 1;
            return Outcome.Whole;
        }
        if (from >= size)
        {
            return Outcome.Unsatisfiable;
        }
        to = Math.Min(to, size - 1);
        return Outcome.Satisfiable;
    }
}
