namespace Jackdaw.Client;

/// <summary>The answer of a request that started a long-running operation on the server: its id (RavenDB's <c>OperationIdResult</c>).</summary>
public sealed class OperationIdResult
{
    public long OperationId { get; init; }

    /// <summary>The tag of the node that runs the operation: its state is asked of that node.</summary>
    public string? OperationNodeTag { get; init; }
}
