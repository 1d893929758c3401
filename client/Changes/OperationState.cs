using System.Text.Json;

namespace Jackdaw.Client;

/// <summary>An operation's state as the server reports it (RavenDB's <c>OperationState</c>).</summary>
public sealed class OperationState
{
    public OperationStatus Status { get; init; }

    /// <summary>How far it came, while <see cref="Status"/> is <see cref="OperationStatus.InProgress"/>; null otherwise.</summary>
    public BulkInsertProgress? Progress { get; init; }

    /// <summary>What it did, or why it failed, once it ended; null while it runs.</summary>
    public OperationResult? Result { get; init; }

    internal static OperationState Read(JsonElement state) => new()
    {
        Status = Enum.TryParse<OperationStatus>(state.GetProperty("Status").GetString(), out var status) ? status : OperationStatus.InProgress,
        Progress = state.TryGetProperty("Progress", out var progress) && progress.ValueKind == JsonValueKind.Object ? BulkInsertProgress.Read(progress) : null,
        Result = state.TryGetProperty("Result", out var result) && result.ValueKind == JsonValueKind.Object ? OperationResult.Read(result) : null,
    };
}
