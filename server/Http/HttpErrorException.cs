namespace Jackdaw.Server.Http;

/// <summary>
/// The one exception type handlers throw to answer with an error: it carries the status code and
/// the <c>Type</c> of the JSON error body. The pipeline turns it into
/// <c>{"Type": ..., "Message": ...}</c> in one place (<see cref="JsonErrors"/>).
/// </summary>
public class HttpErrorException(int statusCode, string type, string message, Exception? inner = null)
    : Exception(message, inner)
{
    public int StatusCode { get; } = statusCode;

    public string Type { get; } = type;

    public static HttpErrorException BadRequest(string message, Exception? inner = null) =>
        new(StatusCodes.Status400BadRequest, ErrorTypes.BadRequest, message, inner);

    public static HttpErrorException NotFound(string type, string message) =>
        new(StatusCodes.Status404NotFound, type, message);

    public static HttpErrorException Conflict(string type, string message) =>
        new(StatusCodes.Status409Conflict, type, message);
}

/// <summary>
/// The <c>Type</c> values of error bodies, decided in one place. One rule: every type is an
/// exception name ending in <c>Exception</c>, as RavenDB's clients expect (they map a body's
/// <c>Type</c> to their own exception classes by that name). docs/architecture.md lists them all.
/// </summary>
public static class ErrorTypes
{
    public const string BadRequest = "BadRequestException";
    public const string InvalidJson = "InvalidJsonException";
    public const string RouteNotFound = "RouteNotFoundException";
    public const string MethodNotAllowed = "MethodNotAllowedException";
    public const string PayloadTooLarge = "PayloadTooLargeException";
    public const string InternalServerError = "InternalServerErrorException";
    public const string Concurrency = "ConcurrencyException";
    public const string DatabaseDoesNotExist = "DatabaseDoesNotExistException";
    public const string DatabaseAlreadyExists = "DatabaseAlreadyExistsException";
    public const string DocumentDoesNotExist = "DocumentDoesNotExistException";
}
