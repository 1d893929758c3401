using System.Net;

namespace Jackdaw.Client;

// The subscription errors share this file, as the client's other errors share JackdawException.cs:
// one hierarchy, read in one place.

/// <summary>Base of the errors of subscriptions and their workers.</summary>
public class SubscriptionException : JackdawException
{
    public SubscriptionException(string message, Exception? innerException = null)
        : base(message, innerException)
    {
    }

    public SubscriptionException(string message, HttpStatusCode? statusCode, string? serverErrorType, Exception? innerException = null)
        : base(message, statusCode, serverErrorType, innerException)
    {
    }
}

/// <summary>No subscription has that name (HTTP 404, or a worker's <c>NotFound</c>). A worker stops with it.</summary>
public sealed class SubscriptionDoesNotExistException(string message, HttpStatusCode? statusCode = HttpStatusCode.NotFound, string? serverErrorType = SubscriptionErrorTypes.DoesNotExist)
    : SubscriptionException(message, statusCode, serverErrorType);

/// <summary>A subscription of that name exists already, in any casing (HTTP 409).</summary>
public sealed class SubscriptionAlreadyExistsException(string message, HttpStatusCode? statusCode = HttpStatusCode.Conflict, string? serverErrorType = SubscriptionErrorTypes.AlreadyExists)
    : SubscriptionException(message, statusCode, serverErrorType);

/// <summary>
/// An <see cref="SubscriptionOpeningStrategy.OpenIfFree"/> (or concurrent) worker found the subscription
/// held by another worker. The worker stops with it, as RavenDB's does: use
/// <see cref="SubscriptionOpeningStrategy.WaitForFree"/> to wait instead.
/// </summary>
public sealed class SubscriptionInUseException(string message)
    : SubscriptionException(message, null, SubscriptionErrorTypes.InUse);

/// <summary>
/// The server closed the worker's subscription for good: another worker took it over, or it was
/// disabled or deleted. The worker stops with it. (A dropped connection is not this: the worker reconnects.)
/// </summary>
public sealed class SubscriptionClosedException(string message)
    : SubscriptionException(message, null, SubscriptionErrorTypes.Closed);

/// <summary>
/// The batch function threw and <see cref="SubscriptionWorkerOptions.IgnoreSubscriberErrors"/> is off:
/// the worker stopped without acknowledging the batch, which will be delivered again. The function's
/// exception is the <see cref="Exception.InnerException"/>.
/// </summary>
public sealed class SubscriberErrorException(string message, Exception innerException)
    : SubscriptionException(message, innerException);

/// <summary>
/// The worker could not get a working connection for longer than
/// <see cref="SubscriptionWorkerOptions.MaxErroneousPeriod"/>; the last failure is the inner exception.
/// </summary>
public sealed class SubscriptionInvalidStateException(string message, Exception? innerException)
    : SubscriptionException(message, innerException);

/// <summary>The <c>Type</c> (HTTP errors) and <c>Exception</c> (worker messages) names of subscription errors.</summary>
public static class SubscriptionErrorTypes
{
    public const string DoesNotExist = "SubscriptionDoesNotExistException";
    public const string AlreadyExists = "SubscriptionAlreadyExistsException";
    public const string InUse = "SubscriptionInUseException";
    public const string Closed = "SubscriptionClosedException";
}
