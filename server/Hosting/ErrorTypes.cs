namespace Jackdaw.Server.Hosting;

/// <summary>
/// The <c>Type</c> values of error bodies, decided in one place. One rule: every type is an
/// exception name ending in <c>Exception</c>, as RavenDB's clients expect (they map a body's
/// <c>Type</c> to their own exception classes by that name). A domain exception's type is its own
/// class name (see <see cref="ErrorMapping"/>). docs/architecture.md lists them all.
/// </summary>
public static class ErrorTypes
{
    public const string BadRequest = "BadRequestException";
    public const string NotLeader = "NotLeaderException";
    public const string InvalidJson = "InvalidJsonException";
    public const string RouteNotFound = "RouteNotFoundException";
    public const string MethodNotAllowed = "MethodNotAllowedException";
    public const string PayloadTooLarge = "PayloadTooLargeException";
    public const string InternalServerError = "InternalServerErrorException";
    public const string Concurrency = "ConcurrencyException";
    public const string DatabaseDoesNotExist = "DatabaseDoesNotExistException";
    public const string DatabaseAlreadyExists = "DatabaseAlreadyExistsException";
    public const string DocumentDoesNotExist = "DocumentDoesNotExistException";

    /// <summary>A read of a document replication left in conflict (<see cref="Errors.DocumentConflictException"/>).</summary>
    public const string DocumentConflict = "DocumentConflictException";
    public const string AttachmentDoesNotExist = "AttachmentDoesNotExistException";
    public const string DiskFull = "DiskFullException";
    public const string DatabaseUnavailable = "DatabaseUnavailableException";
    public const string FeatureNotSupported = "FeatureNotSupportedException";
    public const string InvalidQuery = "InvalidQueryException";
    public const string IndexCompilation = "IndexCompilationException";
    public const string IndexDoesNotExist = "IndexDoesNotExistException";
    public const string IndexLocked = "IndexLockedException";
    public const string SubscriptionDoesNotExist = "SubscriptionDoesNotExistException";
    public const string SubscriptionAlreadyExists = "SubscriptionAlreadyExistsException";
    public const string AnalyzerCompilation = "AnalyzerCompilationException";
    public const string AnalyzerInUse = "AnalyzerInUseException";
    public const string Authorization = "AuthorizationException";
    public const string Backup = "BackupException";
    public const string JavaScript = "JavaScriptException";

    /// <summary>RavenDB's name for a query that waited for non-stale results in vain (our <see cref="Errors.QueryTimeoutException"/>).</summary>
    public const string Timeout = "TimeoutException";

    /// <summary>
    /// The type as RavenDB's server names it: its full .NET type name, from which RavenDB's clients'
    /// exception dispatchers take the class they throw (the Node.js client maps only names under
    /// <c>Raven.Client.Exceptions.</c>, by their last segment). Written for requests from those
    /// clients (<see cref="JsonErrors.RavenClientVersionHeader"/>); curl and Jackdaw's client see the short name.
    /// </summary>
    public static string RavenName(string type) => type switch
    {
        Timeout => "System.TimeoutException",
        DatabaseDoesNotExist or DatabaseUnavailable => "Raven.Client.Exceptions.Database." + type,
        DocumentDoesNotExist or DocumentConflict => "Raven.Client.Exceptions.Documents." + type,
        AttachmentDoesNotExist => "Raven.Client.Exceptions.Documents.Attachments." + type,
        IndexCompilation or AnalyzerCompilation => "Raven.Client.Exceptions.Documents.Compilation." + type,
        IndexDoesNotExist or IndexLocked => "Raven.Client.Exceptions.Documents.Indexes." + type,
        SubscriptionDoesNotExist or SubscriptionAlreadyExists => "Raven.Client.Exceptions.Documents.Subscriptions." + type,
        RouteNotFound => "Raven.Client.Exceptions.Routing." + type,
        Authorization => "Raven.Client.Exceptions.Security." + type,
        JavaScript => "Raven.Client.Exceptions.Documents.Patching." + type,
        _ => "Raven.Client.Exceptions." + type,
    };
}
