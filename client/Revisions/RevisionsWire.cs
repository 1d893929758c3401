using System.Text.Json;
using Jackdaw.Client.Json;

namespace Jackdaw.Client.Revisions;

/// <summary>The small requests of the revisions operations: a JSON body posted, a JSON answer read.</summary>
internal static class RevisionsWire
{
    public static async Task<JsonDocument> PostAsync(OperationContext context, string route, object body, CancellationToken token)
    {
        var bytes = JsonSerializer.SerializeToUtf8Bytes(body, WireJson.Options);
        using var response = await context.Executor.SendAsync(HttpMethod.Post, context.DatabasePath + route, bytes, token).ConfigureAwait(false);
        var answer = await response.Content.ReadAsByteArrayAsync(token).ConfigureAwait(false);
        try
        {
            return JsonDocument.Parse(answer.Length == 0 ? "{}"u8.ToArray() : answer);
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to POST {route} is not JSON: {e.Message}", e);
        }
    }

    public static ConfigureRevisionsOperationResult ReadConfigureResult(JsonDocument answer) => new()
    {
        RaftCommandIndex = answer.RootElement.ValueKind == JsonValueKind.Object && answer.RootElement.TryGetProperty("RaftCommandIndex", out var index) && index.TryGetInt64(out var value) ? value : null,
    };
}
