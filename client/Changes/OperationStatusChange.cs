using System.Text.Json;

namespace Jackdaw.Client;

/// <summary>
/// A long-running operation on the server (a bulk insert) moved: its progress, about once a second
/// while it runs, then its final state (RavenDB's <c>OperationStatusChange</c>).
/// </summary>
public sealed class OperationStatusChange
{
    public long OperationId { get; init; }

    public OperationState State { get; init; } = new();

    public override string ToString() => $"{State.Status} operation {OperationId}";

    /// <summary>Reads the <c>Value</c> of an <c>OperationStatusChange</c> message: <c>{"OperationId","State":{…}}</c>.</summary>
    internal static OperationStatusChange Read(JsonElement value) => new()
    {
        OperationId = value.GetProperty("OperationId").GetInt64(),
        State = OperationState.Read(value.GetProperty("State")),
    };
}
