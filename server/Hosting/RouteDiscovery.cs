using System.Reflection;
using Jackdaw.Server.Routing;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// Finds every <c>[Route]</c> method once at startup and builds the router. A handler class is any
/// public class with such methods; it is created once, with the <see cref="ServerContext"/> as its
/// constructor argument, and each method must be <c>ValueTask M(RequestContext)</c>.
/// </summary>
public static class RouteDiscovery
{
    public static TrieRouter<RequestHandler> BuildRouter(ServerContext server, IEnumerable<Assembly> assemblies)
    {
        var builder = new TrieRouter<RequestHandler>.Builder();
        foreach (var type in assemblies.Distinct().SelectMany(a => a.GetTypes()))
        {
            if (type.IsAbstract || !type.IsClass)
                continue;
            object? instance = null;
            foreach (var method in type.GetMethods(BindingFlags.Instance | BindingFlags.Public | BindingFlags.DeclaredOnly))
            {
                foreach (var route in method.GetCustomAttributes<RouteAttribute>())
                {
                    if (method.ReturnType != typeof(ValueTask) || method.GetParameters() is not [{ ParameterType: var p }] || p != typeof(RequestContext))
                        throw new InvalidOperationException($"{type.Name}.{method.Name} is routed but is not 'ValueTask {method.Name}(RequestContext)'.");
                    instance ??= Activator.CreateInstance(type, server)
                        ?? throw new InvalidOperationException($"{type.Name} could not be created with a ServerContext.");
                    builder.Add(route.Template, route.Method, method.CreateDelegate<RequestHandler>(instance));
                }
            }
        }
        return builder.Build();
    }
}
