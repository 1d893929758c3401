namespace Jackdaw.Client;

/// <summary>
/// An operation on the documents of a database, sent with <see cref="DocumentOperations.SendAsync{TResult}(IOperation{TResult}, CancellationToken)"/>
/// (RavenDB's <c>IOperation&lt;T&gt;</c>): <see cref="PutAttachmentOperation"/>, <see cref="GetAttachmentOperation"/>, ...
/// The client's own types implement it.
/// </summary>
public interface IOperation<TResult>
{
    internal Task<TResult> ExecuteAsync(OperationContext context, CancellationToken token);
}

/// <summary>An operation on the documents of a database that answers nothing (RavenDB's <c>IOperation</c>).</summary>
public interface IOperation
{
    internal Task ExecuteAsync(OperationContext context, CancellationToken token);
}
