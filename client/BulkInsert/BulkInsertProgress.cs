using System.Text.Json;

namespace Jackdaw.Client;

/// <summary>How far a bulk insert has come, as the server reports it (RavenDB's <c>BulkInsertProgress</c>).</summary>
public sealed class BulkInsertProgress
{
    /// <summary>Documents committed (durable) so far.</summary>
    public long Total { get; init; }

    /// <summary>Batches committed so far.</summary>
    public long BatchCount { get; init; }

    /// <summary>The id of the last document of the last batch committed; null before the first.</summary>
    public string? LastProcessedId { get; init; }

    /// <summary>Documents the server has read off the stream, committed or not yet.</summary>
    public long DocumentsProcessed { get; init; }

    /// <summary>Always 0 on Jackdaw, which bulk-inserts documents only (RavenDB's shape has it).</summary>
    public long AttachmentsProcessed { get; init; }

    /// <summary>Always 0 on Jackdaw.</summary>
    public long CountersProcessed { get; init; }

    /// <summary>Always 0 on Jackdaw.</summary>
    public long TimeSeriesProcessed { get; init; }

    public override string ToString() => $"Inserted {Total:#,0} items in {BatchCount:#,0} batches ({DocumentsProcessed:#,0} read).";

    internal static BulkInsertProgress Read(JsonElement progress) => new()
    {
        Total = Number(progress, "Total"),
        BatchCount = Number(progress, "BatchCount"),
        LastProcessedId = progress.TryGetProperty("LastProcessedId", out var id) && id.ValueKind == JsonValueKind.String ? id.GetString() : null,
        DocumentsProcessed = Number(progress, "DocumentsProcessed"),
        AttachmentsProcessed = Number(progress, "AttachmentsProcessed"),
        CountersProcessed = Number(progress, "CountersProcessed"),
        TimeSeriesProcessed = Number(progress, "TimeSeriesProcessed"),
    };

    private static long Number(JsonElement json, string name) =>
        json.TryGetProperty(name, out var value) && value.TryGetInt64(out var number) ? number : 0;
}
