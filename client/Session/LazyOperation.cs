using System.Net;
using System.Runtime.ExceptionServices;
using System.Text.Json;
using Jackdaw.Client.Http;

namespace Jackdaw.Client.Session;

/// <summary>
/// An operation a session runs later, with the others pending, in one <c>multi_get</c>. It names the
/// request it needs when the batch is sent (not when it was made, so that what the session learned
/// meanwhile is not asked again), then reads its item of the answer. It ends with a value or an
/// error, and only its own value sees its error.
/// </summary>
internal abstract class LazyOperation
{
    private Exception? _error;

    public bool IsDone { get; private set; }

    public Exception? Error => _error;

    /// <summary>The request to send, or null when the session answered the operation itself (it is then done).</summary>
    public abstract GetRequest? CreateRequest();

    /// <summary>Reads the operation's item: its status and its <c>Result</c> (empty when null).</summary>
    public void Complete(GetRequest request, int statusCode, ReadOnlyMemory<byte> result)
    {
        try
        {
            HandleResponse(request, statusCode, result);
        }
        catch (Exception e)
        {
            Fail(e);
        }
    }

    /// <summary>
    /// Reads the operation's item where it lies in the answer: <paramref name="reader"/> (over all of
    /// <paramref name="body"/>) is on the <c>Result</c>'s first token and is left on its last one,
    /// even when the operation fails on it.
    /// </summary>
    public void Complete(GetRequest request, int statusCode, ref Utf8JsonReader reader, ReadOnlyMemory<byte> body)
    {
        var atStart = reader;
        try
        {
            HandleResponse(request, statusCode, ref reader, body);
        }
        catch (Exception e)
        {
            reader = atStart;
            reader.Skip();
            Fail(e);
        }
    }

    public void Fail(Exception error)
    {
        _error = error;
        IsDone = true;
    }

    protected abstract void HandleResponse(GetRequest request, int statusCode, ReadOnlyMemory<byte> result);

    /// <summary>The same, reading from the answer's reader; by default the result is located and handled as a slice.</summary>
    protected virtual void HandleResponse(GetRequest request, int statusCode, ref Utf8JsonReader reader, ReadOnlyMemory<byte> body)
    {
        var start = (int)reader.TokenStartIndex;
        reader.Skip();
        HandleResponse(request, statusCode, body[start..(int)reader.BytesConsumed]);
    }

    protected void Done() => IsDone = true;

    protected void ThrowIfFailed()
    {
        if (_error is not null)
        {
            ExceptionDispatchInfo.Throw(_error);
        }
    }

    /// <summary>An item that failed throws what the same request alone would have thrown.</summary>
    protected static void ThrowIfError(GetRequest request, int statusCode, ReadOnlyMemory<byte> result)
    {
        if (statusCode is >= 200 and < 300)
        {
            return;
        }

        throw RequestExecutor.CreateError((HttpStatusCode)statusCode, result.Span, new HttpMethod(request.Method), request.Url + request.Query);
    }
}

/// <summary>A lazy operation whose value is a <typeparamref name="TValue"/>.</summary>
internal abstract class LazyOperation<TValue> : LazyOperation
{
    private TValue _value = default!;

    public TValue GetValue()
    {
        ThrowIfFailed();
        return _value;
    }

    protected void SetValue(TValue value)
    {
        _value = value;
        Done();
    }
}
