using System.Text.Json;

namespace Jackdaw.Server.Tests.Changes;

/// <summary>One event: its id (an etag), its name when not a plain message, its data parsed.</summary>
public sealed record ServerSentEvent(long? Id, string? Name, JsonElement? Data)
{
    public string Describe() => $"{Data!.Value.GetProperty("Type").GetString()} {Data.Value.GetProperty("Id").GetString()}";
}
