using System.Reflection;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// The studio's pages: single self-contained HTML files in <c>server/Studio</c>, embedded in the
/// assembly and read once at startup. Each page takes its database from its own query string and
/// reports a missing or unknown one itself, so a person who mistypes the address reads why.
/// </summary>
public sealed class StudioHandler : HandlerBase
{
    private const string HtmlContentType = "text/html; charset=utf-8";

    // The pages load nothing from outside; the policy makes a browser hold them to that.
    private const string ContentSecurityPolicy =
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'";

    private readonly byte[] _start;
    private readonly byte[] _indexingPerformance;

    public StudioHandler(ServerContext server)
        : base(server)
    {
        _start = ReadPage("index.html");
        _indexingPerformance = ReadPage("indexing-performance.html");
    }

    /// <summary><c>GET /</c>: a browser that opens the server's address lands in the studio.</summary>
    [Route("/", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public ValueTask Root(RequestContext context)
    {
        context.Response.StatusCode = StatusCodes.Status302Found;
        context.Response.Headers.Location = "/studio/";
        return ValueTask.CompletedTask;
    }

    /// <summary><c>GET /studio/</c> (or <c>/studio</c>): the start page, the databases and the pages of each.</summary>
    [Route("/studio", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public ValueTask Start(RequestContext context) => WritePage(context, _start);

    /// <summary><c>GET /studio/indexing-performance?database=</c>: the indexing performance timeline.</summary>
    [Route("/studio/indexing-performance", "GET")]
    [Access(RouteAccess.Unauthenticated)]
    public ValueTask IndexingPerformance(RequestContext context) => WritePage(context, _indexingPerformance);

    private static ValueTask WritePage(RequestContext context, byte[] page)
    {
        var headers = context.Response.Headers;
        headers.CacheControl = "no-cache";
        headers.ContentSecurityPolicy = ContentSecurityPolicy;
        headers.XContentTypeOptions = "nosniff";
        return context.WriteBytesAsync(page, HtmlContentType);
    }

    private static byte[] ReadPage(string fileName)
    {
        var resource = "Jackdaw.Server.Studio." + fileName;
        using var stream = typeof(StudioHandler).Assembly.GetManifestResourceStream(resource)
            ?? throw new InvalidOperationException($"The studio page '{resource}' is not embedded in {typeof(StudioHandler).Assembly.GetName().Name}: server/Jackdaw.Server.csproj must list server/Studio/{fileName} as an EmbeddedResource.");
        using var buffer = new MemoryStream();
        stream.CopyTo(buffer);
        return buffer.ToArray();
    }
}
