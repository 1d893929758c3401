using System.Net;

namespace Jackdaw.Client;

/// <summary>
/// Base of every error the client raises for a failed server call. <see cref="StatusCode"/> and
/// <see cref="ServerErrorType"/> are the HTTP status and the <c>Type</c> of the server's
/// <c>{"Type": ..., "Message": ...}</c> body, when there was a response.
/// </summary>
public class JackdawException : Exception
{
    public JackdawException(string message)
        : base(message)
    {
    }

    public JackdawException(string message, Exception? innerException)
        : base(message, innerException)
    {
    }

    public JackdawException(string message, HttpStatusCode? statusCode, string? serverErrorType, Exception? innerException = null)
        : base(message, innerException)
    {
        StatusCode = statusCode;
        ServerErrorType = serverErrorType;
    }

    /// <summary>The HTTP status of the response, or null when no response arrived.</summary>
    public HttpStatusCode? StatusCode { get; }

    /// <summary>The <c>Type</c> field of the server's error body, e.g. <c>ConcurrencyException</c>.</summary>
    public string? ServerErrorType { get; }
}

/// <summary>A change vector sent with a write did not match the stored one; nothing of the request was applied.</summary>
public sealed class ConcurrencyException(string message, HttpStatusCode? statusCode = HttpStatusCode.Conflict, string? serverErrorType = ErrorTypes.Concurrency)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>An operation that requires an existing document found none.</summary>
public sealed class DocumentDoesNotExistException(string message, HttpStatusCode? statusCode = HttpStatusCode.NotFound, string? serverErrorType = ErrorTypes.DocumentDoesNotExist)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>The database named by the store or session does not exist on the server.</summary>
public sealed class DatabaseDoesNotExistException(string message, HttpStatusCode? statusCode = HttpStatusCode.NotFound, string? serverErrorType = ErrorTypes.DatabaseDoesNotExist)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>A database of that name already exists.</summary>
public sealed class DatabaseAlreadyExistsException(string message, HttpStatusCode? statusCode = HttpStatusCode.Conflict, string? serverErrorType = ErrorTypes.DatabaseAlreadyExists)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>
/// The server rejected the request as malformed (<c>BadRequestException</c>, or <c>InvalidJsonException</c> for a body
/// that is not JSON); <see cref="Exception.Message"/> is the server's explanation.
/// </summary>
public sealed class BadRequestException(string message, HttpStatusCode? statusCode = HttpStatusCode.BadRequest, string? serverErrorType = ErrorTypes.BadRequest)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>
/// The server could not parse or run a query (<c>InvalidQueryException</c>, 400); <see cref="Exception.Message"/>
/// names the position in the RQL and what was expected there.
/// </summary>
public sealed class InvalidQueryException(string message, HttpStatusCode? statusCode = HttpStatusCode.BadRequest, string? serverErrorType = ErrorTypes.InvalidQuery)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>A query or an index operation named an index the database does not have (<c>IndexDoesNotExistException</c>, 404).</summary>
public sealed class IndexDoesNotExistException(string message, HttpStatusCode? statusCode = HttpStatusCode.NotFound, string? serverErrorType = ErrorTypes.IndexDoesNotExist)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>
/// An index definition the server cannot compile (<c>IndexCompilationException</c>): a JavaScript error
/// or a map that is not <c>map('Collection', fn)</c>. The message names the index and, for script errors, the line.
/// </summary>
public sealed class IndexCompilationException(string message, HttpStatusCode? statusCode = HttpStatusCode.BadRequest, string? serverErrorType = ErrorTypes.IndexCompilation)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>
/// A changed definition was refused because the index is locked with
/// <see cref="IndexLockMode.LockedError"/> (<c>IndexLockedException</c>, 409); nothing of that PUT was
/// applied. Unlock it with <see cref="MaintenanceOperations.SetIndexLockAsync(IndexLockMode, string[])"/> first.
/// </summary>
public sealed class IndexLockedException(string message, HttpStatusCode? statusCode = HttpStatusCode.Conflict, string? serverErrorType = ErrorTypes.IndexLocked)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>
/// An analyzer the server cannot build (<c>AnalyzerCompilationException</c>, 400): its <c>Code</c> is C#,
/// or neither a built-in analyzer's name nor a JSON chain of allowed Lucene parts, or an argument is out
/// of bounds. The message names the analyzer and what is allowed; nothing of that PUT was stored.
/// </summary>
public sealed class AnalyzerCompilationException(string message, HttpStatusCode? statusCode = HttpStatusCode.BadRequest, string? serverErrorType = ErrorTypes.AnalyzerCompilation)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>
/// An analyzer that index definitions name was not deleted (<c>AnalyzerInUseException</c>, 409); the
/// message lists the indexes. Change or delete them first.
/// </summary>
public sealed class AnalyzerInUseException(string message, HttpStatusCode? statusCode = HttpStatusCode.Conflict, string? serverErrorType = ErrorTypes.AnalyzerInUse)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>
/// The server gave up waiting (<c>TimeoutException</c>): a query that asked for non-stale results did
/// not get them within its <c>WaitForNonStaleResults</c> timeout (query again, or wait longer), or a
/// save that waited for its indexes was saved but not indexed in time.
/// </summary>
public sealed class ServerTimeoutException(string message, HttpStatusCode? statusCode = HttpStatusCode.RequestTimeout, string? serverErrorType = ErrorTypes.Timeout)
    : JackdawException(message, statusCode, serverErrorType);

/// <summary>
/// No server answered at any of the store's URLs (connection refused, name not resolved, connection
/// reset before a response, or the request timed out). Check that the server runs and that
/// <see cref="DocumentStore.Urls"/> points at it.
/// </summary>
public class ServerUnavailableException(string message, Exception? innerException)
    : JackdawException(message, innerException);

/// <summary>
/// A bulk insert failed. <see cref="Exception.Message"/> carries the server's explanation, which
/// says how many documents were committed before the failure; committed batches stay.
/// </summary>
public sealed class BulkInsertException(string message, HttpStatusCode? statusCode, string? serverErrorType, Exception? innerException = null)
    : JackdawException(message, statusCode, serverErrorType, innerException);

/// <summary>The <c>Type</c> values of the server's error bodies that map to typed exceptions.</summary>
public static class ErrorTypes
{
    public const string Concurrency = "ConcurrencyException";
    public const string DocumentDoesNotExist = "DocumentDoesNotExistException";
    public const string DatabaseDoesNotExist = "DatabaseDoesNotExistException";
    public const string DatabaseAlreadyExists = "DatabaseAlreadyExistsException";
    public const string BadRequest = "BadRequestException";
    public const string InvalidJson = "InvalidJsonException";
    public const string InvalidQuery = "InvalidQueryException";
    public const string IndexDoesNotExist = "IndexDoesNotExistException";
    public const string IndexCompilation = "IndexCompilationException";
    public const string IndexLocked = "IndexLockedException";
    public const string Timeout = "TimeoutException";

    /// <summary>RavenDB's name of the timeout error (write assurance that timed out, among others).</summary>
    public const string RavenTimeout = "RavenTimeoutException";
    public const string AnalyzerCompilation = "AnalyzerCompilationException";
    public const string AnalyzerInUse = "AnalyzerInUseException";
    public const string Authorization = "AuthorizationException";
}
