using System.Globalization;
using System.Text.Json;

namespace Jackdaw.Server.Databases;

/// <summary>
/// An operation's state in RavenDB's <c>OperationState</c> shape, written the same way by
/// <c>operations/state</c> and inside the changes feed's <c>OperationStatusChange</c>:
/// <code>
/// {"$type":"…OperationState, Raven.Client","Progress":{…}|null,"Result":{…}|null,"Status":"InProgress"|"Completed"|"Faulted"|"Canceled"}
/// Progress (in progress): {"$type":"…BulkInsertProgress, Raven.Client","Total","BatchCount","LastProcessedId","Processed",
///                          "DocumentsProcessed","AttachmentsProcessed","CountersProcessed","TimeSeriesProcessed"}
/// Result (completed):     {"$type":"…BulkOperationResult, Raven.Client","Total","Message","Details":[],"Query":null,
///                          "DocumentsProcessed","AttachmentsProcessed","CountersProcessed","TimeSeriesProcessed"}
/// Result (failed):        {"$type":"…OperationExceptionResult, Raven.Client","Type","Message","Error","StatusCode","Total"}
/// </code>
/// The <c>$type</c>s are RavenDB's, which its C# client reads to pick the classes. <c>Processed</c>
/// is RavenDB's older name of <c>DocumentsProcessed</c>, still sent. An operation of another kind
/// (a backup, a restore) gives its own <c>Progress</c> and <c>Result</c> (<see cref="OperationDetails"/>),
/// written as they are; its failure has no <c>Total</c>. Two departures: a cancelled
/// (killed) operation has a result too, saying what was committed, where RavenDB's is null; and
/// <c>Error</c> is the message, not a stack trace.
/// </summary>
public static class OperationStateJson
{
    private const string RavenTypes = "Raven.Client.Documents.Operations.";

    public static void WriteState(Utf8JsonWriter writer, DatabaseOperationState state)
    {
        writer.WriteStartObject();
        writer.WriteString("$type"u8, RavenTypes + "OperationState, Raven.Client");
        writer.WritePropertyName("Progress"u8);
        if (state.Status == OperationStatus.InProgress && state.Details is null)
        {
            WriteProgress(writer, state.Progress);
        }
        else if (state.Status == OperationStatus.InProgress && state.Details?.ProgressJson is { } progressJson)
        {
            writer.WriteRawValue(progressJson, skipInputValidation: true);
        }
        else
        {
            writer.WriteNullValue();
        }
        writer.WritePropertyName("Result"u8);
        switch (state.Status)
        {
            case OperationStatus.Completed when state.Details is { ResultJson: { } resultJson }:
                writer.WriteRawValue(resultJson, skipInputValidation: true);
                break;
            case OperationStatus.Completed when state.Details is null:
                WriteResult(writer, state.Progress.Total);
                break;
            case OperationStatus.Faulted or OperationStatus.Canceled when state.Failure is { } failure:
                WriteFailure(writer, failure, state.Details is null ? state.Progress.Total : null);
                break;
            default:
                writer.WriteNullValue();
                break;
        }
        writer.WriteString("Status"u8, state.Status.ToString());
        writer.WriteEndObject();
    }

    private static void WriteProgress(Utf8JsonWriter writer, in BulkInsertProgress progress)
    {
        writer.WriteStartObject();
        writer.WriteString("$type"u8, RavenTypes + "BulkInsertProgress, Raven.Client");
        writer.WriteNumber("Total"u8, progress.Total);
        writer.WriteNumber("BatchCount"u8, progress.BatchCount);
        writer.WriteString("LastProcessedId"u8, progress.LastProcessedId);
        writer.WriteNumber("Processed"u8, progress.DocumentsProcessed);
        WriteCounts(writer, progress.DocumentsProcessed);
        writer.WriteEndObject();
    }

    private static void WriteResult(Utf8JsonWriter writer, long total)
    {
        writer.WriteStartObject();
        writer.WriteString("$type"u8, RavenTypes + "BulkOperationResult, Raven.Client");
        writer.WriteNumber("Total"u8, total);
        writer.WriteString("Message"u8, "Processed " + total.ToString("#,#0", CultureInfo.InvariantCulture) + " items.");
        writer.WriteStartArray("Details"u8);
        writer.WriteEndArray();
        writer.WriteNull("Query"u8);
        WriteCounts(writer, total);
        writer.WriteEndObject();
    }

    private static void WriteFailure(Utf8JsonWriter writer, OperationFailure failure, long? total)
    {
        writer.WriteStartObject();
        writer.WriteString("$type"u8, RavenTypes + "OperationExceptionResult, Raven.Client");
        writer.WriteString("Type"u8, failure.Type);
        writer.WriteString("Message"u8, failure.Message);
        writer.WriteString("Error"u8, failure.Message);
        writer.WriteNumber("StatusCode"u8, failure.StatusCode);
        if (total is { } committed)
        {
            writer.WriteNumber("Total"u8, committed);
        }
        writer.WriteEndObject();
    }

    /// <summary>Only documents are bulk-inserted: attachments, counters and time series are always 0.</summary>
    private static void WriteCounts(Utf8JsonWriter writer, long documents)
    {
        writer.WriteNumber("DocumentsProcessed"u8, documents);
        writer.WriteNumber("AttachmentsProcessed"u8, 0);
        writer.WriteNumber("CountersProcessed"u8, 0);
        writer.WriteNumber("TimeSeriesProcessed"u8, 0);
    }
}
