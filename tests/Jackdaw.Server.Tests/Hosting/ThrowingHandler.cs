using Jackdaw.Server.Handlers;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Tests.Hosting;

/// <summary>Routes that exist only in tests, to exercise the pipeline's failure paths.</summary>
public sealed class ThrowingHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/test/throw", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public ValueTask ThrowSynchronously(RequestContext context) =>
        throw new InvalidOperationException("the test handler failed on purpose");

    [Route("/test/throw-async", "GET")]

    [Access(RouteAccess.Unauthenticated)]
    public async ValueTask ThrowAsynchronously(RequestContext context)
    {
        await Task.Yield();
        throw new InvalidOperationException("the async test handler failed on purpose");
    }

    /// <summary>Writes part of an answer, then fails: the error must replace what was written.</summary>
    [Route("/databases/*/test/write-then-throw", "GET")]
    [Access(RouteAccess.DatabaseRead)]
    public async ValueTask WriteThenThrow(RequestContext context)
    {
        context.Response.Headers["X-Partial"] = "yes";
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteString("Partial", "answer");
        json.Flush();
        await Task.Yield();
        throw new InvalidOperationException("the handler failed after writing");
    }

    [Route("/databases/*/test/throw", "GET")]

    [Access(RouteAccess.DatabaseRead)]
    public ValueTask ThrowUnderADatabase(RequestContext context) =>
        throw new InvalidOperationException("the database test handler failed on purpose");

    /// <summary>Fails once the client has gone away, so that its error answer has nobody to go to.</summary>
    [Route("/test/fail-after-abort", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public async ValueTask FailAfterAbort(RequestContext context)
    {
        var aborted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using (context.RequestAborted.Register(() => aborted.TrySetResult()))
        {
            await aborted.Task;
        }
        throw new IOException("the test handler failed after its client went away");
    }

    [Route("/test/bad-request", "POST")]

    [Access(RouteAccess.Unauthenticated)]
    public ValueTask BadRequest(RequestContext context) =>
        throw new BadRequestException("the body was not acceptable");

    /// <summary>Accepts a WebSocket and sends back each text message until the client closes.</summary>
    [Route("/test/websocket-echo", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public async ValueTask WebSocketEcho(RequestContext context)
    {
        if (!context.HttpContext.WebSockets.IsWebSocketRequest)
        {
            throw new BadRequestException("Expected a WebSocket request.");
        }
        using var socket = await context.HttpContext.WebSockets.AcceptWebSocketAsync();
        var buffer = new byte[4096];
        while (true)
        {
            var received = await socket.ReceiveAsync(buffer, context.RequestAborted);
            if (received.MessageType == System.Net.WebSockets.WebSocketMessageType.Close)
            {
                await socket.CloseAsync(System.Net.WebSockets.WebSocketCloseStatus.NormalClosure, "bye", context.RequestAborted);
                return;
            }
            await socket.SendAsync(buffer.AsMemory(0, received.Count), received.MessageType, received.EndOfMessage, context.RequestAborted);
        }
    }

    [Route("/test/echo/*/$", "GET")]

    [Access(RouteAccess.Unauthenticated)]
    public ValueTask Echo(RequestContext context)
    {
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteString("Segment", context.GetCapture(0));
        json.WriteString("Rest", context.GetCapture(1));
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    [Route("/test/body", "POST")]

    [Access(RouteAccess.Unauthenticated)]
    public async ValueTask ReadBody(RequestContext context)
    {
        long total = 0;
        while (true)
        {
            var result = await context.Request.BodyReader.ReadAsync(context.RequestAborted);
            total += result.Buffer.Length;
            context.Request.BodyReader.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted)
            {
                break;
            }
        }
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteNumber("Bytes", total);
        json.WriteEndObject();
        await context.CompleteJsonAsync();
    }
}
