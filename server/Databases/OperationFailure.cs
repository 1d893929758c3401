namespace Jackdaw.Server.Databases;

/// <summary>
/// Why an operation failed, as its request answered it (RavenDB's <c>OperationExceptionResult</c>):
/// the error's type and message, and the status the request was answered with.
/// </summary>
public sealed record OperationFailure(string Type, string Message, int StatusCode);
