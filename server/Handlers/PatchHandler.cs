using System.Text.Json;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Patching;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>PATCH /databases/*/docs?id=</c>: a JavaScript patch of one document (RavenDB's
/// <c>PatchOperation</c>), with <c>test=true</c> (run and answer, store nothing), <c>debug=true</c>
/// (the script's output and actions) and <c>skipPatchIfChangeVectorMismatch=true</c>.
/// </summary>
public sealed class PatchHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// Body <c>{"Patch":{"Script","Values"},"PatchIfMissing":{...},"CreateIfMissing":{...}}</c>,
    /// <c>If-Match</c> for the expected change vector. Answers as RavenDB does: 404 with no body for
    /// <c>DocumentDoesNotExist</c>, 304 for <c>Skipped</c>, 201 for <c>Created</c>, else 200, with
    /// <c>{"Status","ModifiedDocument"[,"OriginalDocument","Debug"][,"LastModified","ChangeVector","Collection"]}</c>.
    /// </summary>
    [Route("/databases/*/docs", "PATCH")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Patch(RequestContext context)
    {
        context.LimitBody(RequestBodyKind.Document);
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var (id, test, debug, skip) = ReadOptions(context);
        using var body = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false)
            ?? throw new Errors.BadRequestException("PATCH /docs needs a body: {\"Patch\":{\"Script\":\"...\",\"Values\":{...}}}.");
        if (body.RootElement.ValueKind != JsonValueKind.Object)
        {
            throw new Errors.BadRequestException("The body of PATCH /docs is an object: {\"Patch\":{\"Script\":\"...\",\"Values\":{...}}}.");
        }
        var patch = PatchRequestReader.Read(body.RootElement, $"Patch of '{id}'", skip, debug);
        var ifMatch = context.Request.Headers.IfMatch;
        var command = new PatchDocumentCommand(patch, id, ifMatch.Count == 0 ? null : ifMatch.ToString().Trim('"'), context.Documents) { Test = test };
        try
        {
            await database.EnqueueAsync(command).ConfigureAwait(false);
        }
        catch (PatchDocumentCommand.TestRunRollback)
        {
        }

        var result = command.Result;
        switch (result.Status)
        {
            case "DocumentDoesNotExist":
                context.Response.StatusCode = StatusCodes.Status404NotFound;
                return;
            case "Skipped":
                context.Response.StatusCode = StatusCodes.Status304NotModified;
                return;
        }
        var json = context.StartJson(result.Status == "Created" ? StatusCodes.Status201Created : StatusCodes.Status200OK);
        json.WriteStartObject();
        json.WriteString("Status", result.Status);
        json.WritePropertyName("ModifiedDocument");
        WriteRaw(json, result.ModifiedDocument);
        if (debug)
        {
            json.WritePropertyName("OriginalDocument");
            WriteRaw(json, test ? result.OriginalDocument : null);
            json.WritePropertyName("Debug");
            WriteRaw(json, result.Debug);
        }
        if (result.Put is { } put)
        {
            json.WriteString("LastModified", put.LastModified.ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'", System.Globalization.CultureInfo.InvariantCulture));
            json.WriteString("ChangeVector", put.ChangeVector);
            json.WriteString("Collection", PatchedCollection(result));
        }
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    private static (string Id, bool Test, bool Debug, bool Skip) ReadOptions(RequestContext context)
    {
        var query = new UrlQuery(context.Request.QueryString.Value);
        var test = Flag(query, "test");
        return (DocumentBodies.ValidateId(query.GetString("id")), test, Flag(query, "debug") || test, Flag(query, "skipPatchIfChangeVectorMismatch"));
    }

    private static bool Flag(UrlQuery query, string name) =>
        query.GetString(name) is { } value && value.Equals("true", StringComparison.OrdinalIgnoreCase);

    private static void WriteRaw(Utf8JsonWriter json, string? value)
    {
        if (value is null)
        {
            json.WriteNullValue();
        }
        else
        {
            json.WriteRawValue(value, skipInputValidation: true);
        }
    }

    /// <summary>The patched document's collection, as its stored metadata names it.</summary>
    private static string? PatchedCollection(PatchOutcome result)
    {
        if (result.ModifiedDocument is not { } modified)
        {
            return null;
        }
        using var document = JsonDocument.Parse(modified);
        return document.RootElement.TryGetProperty("@metadata", out var metadata) && metadata.ValueKind == JsonValueKind.Object
            && metadata.TryGetProperty("@collection", out var collection) && collection.ValueKind == JsonValueKind.String
            ? collection.GetString()
            : null;
    }
}
