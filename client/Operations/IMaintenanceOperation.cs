namespace Jackdaw.Client;

/// <summary>
/// An administrative operation on a database, sent with <see cref="MaintenanceOperations.SendAsync{TResult}(IMaintenanceOperation{TResult}, CancellationToken)"/>
/// (RavenDB's <c>IMaintenanceOperation&lt;T&gt;</c>): <see cref="ConfigureRevisionsOperation"/>, ...
/// One that answers an <see cref="OperationIdResult"/> starts a long-running operation:
/// <see cref="MaintenanceOperations.SendAsync(IMaintenanceOperation{OperationIdResult}, CancellationToken)"/>
/// answers the <see cref="Operation"/> to wait on. The client's own types implement it.
/// </summary>
public interface IMaintenanceOperation<TResult>
{
    internal Task<TResult> ExecuteAsync(OperationContext context, CancellationToken token);
}

/// <summary>An administrative operation that answers nothing (RavenDB's <c>IMaintenanceOperation</c>).</summary>
public interface IMaintenanceOperation
{
    internal Task ExecuteAsync(OperationContext context, CancellationToken token);
}
