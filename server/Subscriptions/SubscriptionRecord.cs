using System.Text.Json;
using System.Text.Json.Nodes;

namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// What the database stores for one subscription, in its <c>Subscriptions</c> tree (key: the
/// lowercased name): the query, the acknowledged position (every document of the collection up to
/// <see cref="AckedEtag"/> was delivered and acknowledged), whether it is disabled, and times.
/// </summary>
public sealed record SubscriptionRecord(
    long Id,
    string Name,
    string Query,
    long AckedEtag,
    bool Disabled,
    DateTime CreatedAt,
    DateTime? LastAckAt,
    DateTime? LastBatchAt)
{
    public byte[] ToJson() => JsonSerializer.SerializeToUtf8Bytes(new JsonObject
    {
        ["Id"] = Id,
        ["Name"] = Name,
        ["Query"] = Query,
        ["AckedEtag"] = AckedEtag,
        ["Disabled"] = Disabled,
        ["CreatedAt"] = CreatedAt.ToString("o"),
        ["LastAckAt"] = LastAckAt?.ToString("o"),
        ["LastBatchAt"] = LastBatchAt?.ToString("o"),
    });

    public static SubscriptionRecord FromJson(JsonElement json) => new(
        json.GetProperty("Id").GetInt64(),
        json.GetProperty("Name").GetString()!,
        json.GetProperty("Query").GetString()!,
        json.GetProperty("AckedEtag").GetInt64(),
        json.GetProperty("Disabled").GetBoolean(),
        json.GetProperty("CreatedAt").GetDateTime().ToUniversalTime(),
        json.TryGetProperty("LastAckAt", out var ack) && ack.ValueKind == JsonValueKind.String ? ack.GetDateTime().ToUniversalTime() : null,
        json.TryGetProperty("LastBatchAt", out var batch) && batch.ValueKind == JsonValueKind.String ? batch.GetDateTime().ToUniversalTime() : null);
}
