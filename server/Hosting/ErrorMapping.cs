using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// The one table from exceptions to HTTP answers. Code below the handlers throws domain exceptions
/// (<see cref="Errors"/>, blittable parse errors, storage errors) and knows nothing of status codes;
/// the pipeline asks this table how to answer. An exception it does not know is a bug: 500.
/// </summary>
public static class ErrorMapping
{
    /// <summary>The status and body <c>Type</c> for <paramref name="exception"/>; null when it is not a known error (a 500).</summary>
    public static (int Status, string Type)? Map(Exception exception) => exception switch
    {
        BadRequestException => (StatusCodes.Status400BadRequest, ErrorTypes.BadRequest),
        ClusterException => (StatusCodes.Status400BadRequest, ErrorTypes.BadRequest),
        // 503: RavenDB's clients retry a 503 on the next node of the topology, which may lead.
        NotLeaderException => (StatusCodes.Status503ServiceUnavailable, ErrorTypes.NotLeader),
        BackupException => (StatusCodes.Status400BadRequest, ErrorTypes.Backup),
        PatchScriptException => (StatusCodes.Status400BadRequest, ErrorTypes.JavaScript),
        AuthorizationException denied => (denied.NotAuthenticated ? StatusCodes.Status401Unauthorized : StatusCodes.Status403Forbidden, ErrorTypes.Authorization),
        ConcurrencyException => (StatusCodes.Status409Conflict, ErrorTypes.Concurrency),
        DocumentConflictException => (StatusCodes.Status409Conflict, ErrorTypes.DocumentConflict),
        // A batch naming a missing document is refused whole with 422. RavenDB's clients read a 404
        // from bulk_docs as "no result" (the message naming the document is lost) and any 409 as a
        // ConcurrencyException; from 422 they throw the body's Type, DocumentDoesNotExistException.
        DocumentDoesNotExistException { InBatch: true } => (StatusCodes.Status422UnprocessableEntity, ErrorTypes.DocumentDoesNotExist),
        DocumentDoesNotExistException => (StatusCodes.Status404NotFound, ErrorTypes.DocumentDoesNotExist),
        AttachmentDoesNotExistException => (StatusCodes.Status404NotFound, ErrorTypes.AttachmentDoesNotExist),
        // 503 with a Database-Missing header, as RavenDB answers: its clients read a 404 as "no such document".
        DatabaseDoesNotExistException => (StatusCodes.Status503ServiceUnavailable, ErrorTypes.DatabaseDoesNotExist),
        DatabaseAlreadyExistsException => (StatusCodes.Status409Conflict, ErrorTypes.DatabaseAlreadyExists),
        PayloadTooLargeException => (StatusCodes.Status413PayloadTooLarge, ErrorTypes.PayloadTooLarge),
        DatabaseUnavailableException => (StatusCodes.Status503ServiceUnavailable, ErrorTypes.DatabaseUnavailable),
        FeatureNotSupportedException => (StatusCodes.Status501NotImplemented, ErrorTypes.FeatureNotSupported),
        InvalidQueryException => (StatusCodes.Status400BadRequest, ErrorTypes.InvalidQuery),
        IndexCompilationException => (StatusCodes.Status400BadRequest, ErrorTypes.IndexCompilation),
        IndexDoesNotExistException => (StatusCodes.Status404NotFound, ErrorTypes.IndexDoesNotExist),
        IndexLockedException => (StatusCodes.Status409Conflict, ErrorTypes.IndexLocked),
        SubscriptionDoesNotExistException => (StatusCodes.Status404NotFound, ErrorTypes.SubscriptionDoesNotExist),
        SubscriptionAlreadyExistsException => (StatusCodes.Status409Conflict, ErrorTypes.SubscriptionAlreadyExists),
        AnalyzerCompilationException => (StatusCodes.Status400BadRequest, ErrorTypes.AnalyzerCompilation),
        AnalyzerInUseException => (StatusCodes.Status409Conflict, ErrorTypes.AnalyzerInUse),
        // 408, as RavenDB answers a wait for non-stale results that timed out.
        QueryTimeoutException or IndexesNotCaughtUpException or ReplicasNotCaughtUpException => (StatusCodes.Status408RequestTimeout, ErrorTypes.Timeout),
        // Another environment still holds the folder (a closed one whose last readers run on).
        EnvironmentLockedException => (StatusCodes.Status503ServiceUnavailable, ErrorTypes.DatabaseUnavailable),
        // 507 Insufficient Storage: the request was fine, the server's disk is not.
        DiskFullException => (StatusCodes.Status507InsufficientStorage, ErrorTypes.DiskFull),
        BlittableParseException or System.Text.Json.JsonException => (StatusCodes.Status400BadRequest, ErrorTypes.InvalidJson),
        BadHttpRequestException bad => (bad.StatusCode, bad.StatusCode == StatusCodes.Status413PayloadTooLarge ? ErrorTypes.PayloadTooLarge : ErrorTypes.BadRequest),
        _ => null,
    };

    /// <summary>Headers an error answer carries besides its body (RavenDB's <c>Database-Missing</c>).</summary>
    public static void AddHeaders(HttpResponse response, Exception exception)
    {
        if (exception is DatabaseDoesNotExistException missing)
        {
            response.Headers["Database-Missing"] = missing.Name;
        }
    }

    /// <summary>Fields an error's body carries besides <c>Type</c> and <c>Message</c> (RavenDB's <c>DocId</c> and <c>LargestEtag</c> of a conflict, which its clients read).</summary>
    public static void WriteFields(System.Text.Json.Utf8JsonWriter writer, Exception exception)
    {
        if (exception is DocumentConflictException conflict)
        {
            writer.WriteString("DocId", conflict.DocumentId);
            writer.WriteNumber("LargestEtag", conflict.LargestEtag);
        }
    }

    /// <summary>The message of the error body: the exception's own, with context where it needs it.</summary>
    public static string MessageOf(Exception exception) => exception switch
    {
        System.Text.Json.JsonException json => "The request body is not valid JSON: " + JsonSyntaxErrors.Describe(json),
        BlittableParseException { Line: > 0 } parse => "The request body is not valid JSON: " + JsonSyntaxErrors.Located(parse.Description, parse.Line, parse.Column),
        _ => exception.Message,
    };

    /// <summary>
    /// The error as an operation's state reports it (RavenDB's <c>OperationExceptionResult</c>): the
    /// type, message and status its request would have been answered with; an unknown exception
    /// is an internal error whose message names its class.
    /// </summary>
    public static Databases.OperationFailure FailureOf(Exception exception) =>
        Map(exception) is var (status, type)
            ? new Databases.OperationFailure(type, MessageOf(exception), status)
            : new Databases.OperationFailure(ErrorTypes.InternalServerError, $"{exception.GetType().Name}: {exception.Message}", StatusCodes.Status500InternalServerError);
}
