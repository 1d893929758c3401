using System.Reflection;
using Jackdaw.Server.Handlers;
using Jackdaw.Server.Hosting;

namespace Jackdaw.Server.Routing;

/// <summary>Finds the <c>[Route]</c> methods of every handler class once at startup and builds the router.</summary>
public static class RouteDiscovery
{
    public static TrieRouter<RequestHandler> BuildRouter(ServerContext server, IEnumerable<Assembly> assemblies)
    {
        var builder = new TrieRouter<RequestHandler>.Builder();
        foreach (var type in assemblies.Distinct().SelectMany(a => a.GetTypes()))
        {
            if (type.IsAbstract || !type.IsSubclassOf(typeof(HandlerBase)))
                continue;
            HandlerBase? instance = null;
            foreach (var method in type.GetMethods(BindingFlags.Instance | BindingFlags.Public | BindingFlags.DeclaredOnly))
            {
                var routes = method.GetCustomAttributes<RouteAttribute>();
                foreach (var route in routes)
                {
                    if (method.ReturnType != typeof(ValueTask) || method.GetParameters() is not [{ ParameterType: var p }] || p != typeof(RequestContext))
                        throw new InvalidOperationException($"{type.Name}.{method.Name} is routed but is not 'ValueTask {method.Name}(RequestContext)'.");
                    instance ??= (HandlerBase)Activator.CreateInstance(type, server)!;
                    builder.Add(route.Template, route.Method, method.CreateDelegate<RequestHandler>(instance));
                }
            }
        }
        return builder.Build();
    }
}
