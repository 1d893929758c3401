using System.Reflection;
using Jackdaw.Server.Hosting;

namespace Jackdaw.Server.Tests.Hosting;

public sealed class RouteDiscoveryTests
{
    [Fact]
    public void TheListedHandlerClassesAreExactlyTheServerClassesWithRoutes()
    {
        // The server's start reads its RouteHandlers attribute instead of scanning its assembly: a
        // handler class added without its line there would serve nothing.
        var scanned = RouteDiscovery.HandlerTypesIn([typeof(JackdawHost).Assembly]).Select(t => t.FullName).Order(StringComparer.Ordinal).ToList();
        var listed = typeof(JackdawHost).Assembly.GetCustomAttribute<RouteHandlersAttribute>()!.Types.Select(t => t.FullName).Order(StringComparer.Ordinal).ToList();

        Assert.NotEmpty(scanned);
        Assert.Equal(scanned, listed);
    }
}
