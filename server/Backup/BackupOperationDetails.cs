using System.Text.Json;
using Jackdaw.Server.Databases;

namespace Jackdaw.Server.Backup;

/// <summary>
/// A backup's, restore's or verification's part of its operation state: the progress of its
/// <see cref="BackupRun"/> while it runs, and the result it ended with
/// (<see cref="BackupOperationJson"/> writes both).
/// </summary>
internal sealed class BackupOperationDetails(BackupRun run, bool restore) : IOperationDetails
{
    private byte[]? _result;

    public long Version => run.Version;

    /// <summary>Set before the operation completes.</summary>
    public byte[]? Result
    {
        get => Volatile.Read(ref _result);
        set => Volatile.Write(ref _result, value);
    }

    public void WriteProgress(Utf8JsonWriter writer) => writer.WriteRawValue(BackupOperationJson.Progress(run, restore), skipInputValidation: true);

    public void WriteResult(Utf8JsonWriter writer)
    {
        if (Result is { } result)
        {
            writer.WriteRawValue(result, skipInputValidation: true);
        }
        else
        {
            writer.WriteNullValue();
        }
    }

    /// <summary>Completes <paramref name="operation"/> with <paramref name="result"/>.</summary>
    public void Complete(DatabaseOperation operation, byte[] result)
    {
        Result = result;
        operation.Complete(0);
    }
}
