using System.Text.Encodings.Web;
using System.Text.Json;

namespace Jackdaw.Server.Http;

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
}
