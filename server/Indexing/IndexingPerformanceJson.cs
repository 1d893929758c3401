using System.Globalization;
using System.Text.Json;

namespace Jackdaw.Server.Indexing;

/// <summary>Indexing batches in RavenDB's shape of indexing performance stats.</summary>
public static class IndexingPerformanceJson
{
    /// <summary><c>{"Name":index,"Performance":[batches]}</c>.</summary>
    public static void WriteIndex(Utf8JsonWriter writer, string index, IEnumerable<IndexingBatch> batches)
    {
        writer.WriteStartObject();
        writer.WriteString("Name", index);
        writer.WriteStartArray("Performance");
        foreach (var batch in batches)
        {
            WriteBatch(writer, batch);
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
    }

    public static void WriteBatch(Utf8JsonWriter writer, IndexingBatch batch)
    {
        writer.WriteStartObject();
        writer.WriteNumber("Id", batch.Id);
        writer.WriteString("Started", Time(batch.Started));
        writer.WriteString("Completed", Time(batch.Completed));
        writer.WriteNumber("DurationInMs", Math.Round(batch.DurationInMs, 3));
        writer.WriteBoolean("HasCount", true);
        writer.WriteNumber("InputCount", batch.InputCount);
        writer.WriteNumber("SuccessCount", batch.InputCount - batch.FailedCount);
        writer.WriteNumber("FailedCount", batch.FailedCount);
        writer.WriteNumber("OutputCount", batch.OutputCount);
        writer.WriteNumber("AllocatedBytes", batch.AllocatedBytes);
        writer.WriteStartObject("DocumentsSize");
        writer.WriteNumber("SizeInBytes", batch.DocumentsSize);
        writer.WriteEndObject();
        writer.WritePropertyName("Details");
        WriteOperation(writer, batch.Details);
        writer.WriteEndObject();
    }

    private static void WriteOperation(Utf8JsonWriter writer, IndexingOperation operation)
    {
        writer.WriteStartObject();
        writer.WriteString("Name", operation.Name);
        writer.WriteNumber("DurationInMs", Math.Round(operation.DurationInMs, 3));
        writer.WriteStartArray("Operations");
        foreach (var child in operation.Operations)
        {
            WriteOperation(writer, child);
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
    }

    // RavenDB's time format, as Wire's JsonDefaults.FormatTime writes it (Indexing may not use Wire).
    private static string Time(DateTime time) => time.ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'", CultureInfo.InvariantCulture);
}
