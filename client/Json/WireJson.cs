using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;

namespace Jackdaw.Client.Json;

/// <summary>
/// Serializer options for the server's own JSON (index definitions, statistics), as opposed to
/// documents, which follow the conventions: names exactly as the wire has them whatever naming
/// policy the documents use, enums as strings, nulls left out of requests.
/// </summary>
internal static class WireJson
{
    public static readonly JsonSerializerOptions Options = Create();

    private static JsonSerializerOptions Create()
    {
        var options = new JsonSerializerOptions(JsonSerializerDefaults.General)
        {
            Converters = { new JsonStringEnumConverter() },
            DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,

            // JavaScript maps keep their quotes and arrows readable ('Orders', =>) instead of \u0027 and \u003E.
            Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
            PropertyNameCaseInsensitive = true,
            TypeInfoResolver = new DefaultJsonTypeInfoResolver(),
        };
        options.MakeReadOnly();
        return options;
    }
}
