using System.Text.Encodings.Web;
using System.Text.Json;

namespace Jackdaw.Server.Wire;

/// <summary>
/// Writer settings for every JSON response. The relaxed encoder keeps <c>+</c>, <c>'</c> and
/// non-ASCII text readable: our bodies are JSON for API clients, never inlined into HTML.
/// </summary>
public static class JsonDefaults
{
    public static readonly JsonWriterOptions WriterOptions = new()
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        SkipValidation = true,
    };

    /// <summary>A UTC time as RavenDB's clients parse it: seven fraction digits and a Z.</summary>
    public static string FormatTime(DateTime utc) => utc.ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'", System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>
    /// A date and time a client sent (a query parameter, a request field) as UTC; one without a
    /// zone is taken as UTC, as RavenDB's clients mean it.
    /// </summary>
    /// <param name="name">The parameter or field, for the error.</param>
    public static DateTime ParseTime(string text, string name)
    {
        if (!DateTime.TryParse(text, System.Globalization.CultureInfo.InvariantCulture, System.Globalization.DateTimeStyles.AdjustToUniversal | System.Globalization.DateTimeStyles.AssumeUniversal, out var time))
        {
            throw new Errors.BadRequestException($"'{name}' must be a date and time such as 2026-01-02T03:04:05.0000000Z (UTC); got '{text}'.");
        }
        return DateTime.SpecifyKind(time, DateTimeKind.Utc);
    }

    /// <summary>Writes <paramref name="name"/> as <see cref="FormatTime"/>, or null.</summary>
    public static void WriteTime(Utf8JsonWriter writer, string name, DateTime? utc)
    {
        if (utc is { } time)
        {
            writer.WriteString(name, FormatTime(time));
        }
        else
        {
            writer.WriteNull(name);
        }
    }
}
