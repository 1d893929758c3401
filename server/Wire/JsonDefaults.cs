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

    /// <summary>Writes <paramref name="name"/> as <see cref="FormatTime"/>, or null.</summary>
    public static void WriteTime(Utf8JsonWriter writer, string name, DateTime? utc)
    {
        if (utc is { } time)
            writer.WriteString(name, FormatTime(time));
        else
            writer.WriteNull(name);
    }
}
