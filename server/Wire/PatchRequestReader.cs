using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Patching;

namespace Jackdaw.Server.Wire;

/// <summary>
/// RavenDB's patch request as its clients send it, in <c>PATCH /docs</c> bodies and <c>bulk_docs</c>
/// PATCH commands: <c>"Patch":{"Script":"...","Values":{...}}</c>, optional
/// <c>"PatchIfMissing"</c> of the same shape and <c>"CreateIfMissing"</c> (a document).
/// </summary>
public static class PatchRequestReader
{
    /// <summary>The patch of <paramref name="body"/>'s <c>Patch</c>, <c>PatchIfMissing</c> and <c>CreateIfMissing</c> properties.</summary>
    /// <exception cref="BadRequestException">A property has the wrong shape.</exception>
    /// <exception cref="PatchScriptException">A script does not parse.</exception>
    public static DocumentPatch Read(JsonElement body, string where, bool skipIfChangeVectorMismatch = false, bool debug = false)
    {
        if (!body.TryGetProperty("Patch", out var patch) || patch.ValueKind != JsonValueKind.Object)
        {
            throw new BadRequestException($"{where} has no 'Patch' object with a 'Script': send {{\"Patch\":{{\"Script\":\"this.Name = args.name\",\"Values\":{{\"name\":\"x\"}}}}}}.");
        }
        var ifMissing = body.TryGetProperty("PatchIfMissing", out var missing) && missing.ValueKind != JsonValueKind.Null
            ? Script(missing, where + " (PatchIfMissing)")
            : null;
        string? create = null;
        if (body.TryGetProperty("CreateIfMissing", out var document) && document.ValueKind != JsonValueKind.Null)
        {
            if (document.ValueKind != JsonValueKind.Object)
            {
                throw new BadRequestException($"{where}: 'CreateIfMissing' must be the document to create, an object.");
            }
            create = document.GetRawText();
        }
        return new DocumentPatch(Script(patch, where), ifMissing, create)
        {
            SkipIfChangeVectorMismatch = skipIfChangeVectorMismatch,
            Debug = debug,
        };
    }

    private static PatchScript Script(JsonElement request, string where)
    {
        if (request.ValueKind != JsonValueKind.Object || !request.TryGetProperty("Script", out var script) || script.ValueKind != JsonValueKind.String || string.IsNullOrWhiteSpace(script.GetString()))
        {
            throw new BadRequestException($"{where}: a patch is an object with a 'Script' (and 'Values'), {{\"Script\":\"this.Name = args.name\",\"Values\":{{\"name\":\"x\"}}}}.");
        }
        JsonElement? values = request.TryGetProperty("Values", out var given) ? given : null;
        return PatchScript.Compile(script.GetString()!, values, alias: null, where);
    }
}
