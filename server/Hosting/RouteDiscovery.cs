using System.Reflection;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// Finds every <c>[Route]</c> method of the handler classes once at startup and builds the router.
/// An assembly's classes are those its <see cref="RouteHandlersAttribute"/> names (the server's);
/// an assembly without one is scanned (tests' own handlers). A handler class is any public class
/// with such methods; it is created once, with the <see cref="ServerContext"/> as its
/// constructor argument, and each method must be <c>ValueTask M(RequestContext)</c> and declare
/// the least access each of its routes needs (<see cref="AccessAttribute"/>). On a secured server
/// every handler is bound behind its check (<see cref="RequestAuthorization"/>).
/// </summary>
public static class RouteDiscovery
{
    public static TrieRouter<RequestHandler> BuildRouter(ServerContext server, IEnumerable<Assembly> assemblies)
    {
        var builder = new TrieRouter<RequestHandler>.Builder();
        foreach (var type in assemblies.Distinct().SelectMany(a => a.GetCustomAttribute<RouteHandlersAttribute>()?.Types ?? HandlerTypesIn([a])).Distinct())
        {
            if (type.IsAbstract || !type.IsClass)
            {
                continue;
            }
            object? instance = null;
            foreach (var method in type.GetMethods(BindingFlags.Instance | BindingFlags.Public | BindingFlags.DeclaredOnly))
            {
                foreach (var route in method.GetCustomAttributes<RouteAttribute>())
                {
                    if (method.ReturnType != typeof(ValueTask) || method.GetParameters() is not [{ ParameterType: var p }] || p != typeof(RequestContext))
                    {
                        throw new InvalidOperationException($"{type.Name}.{method.Name} is routed but is not 'ValueTask {method.Name}(RequestContext)'.");
                    }
                    instance ??= Activator.CreateInstance(type, server)
                        ?? throw new InvalidOperationException($"{type.Name} could not be created with a ServerContext.");
                    var access = AccessAttribute.For(method, route.Template)
                        ?? throw new InvalidOperationException($"{type.Name}.{method.Name} serves '{route.Method} {route.Template}' but declares no [Access(...)]: every route says the least clearance it needs.");
                    var handler = method.CreateDelegate<RequestHandler>(instance);
                    if (server.Security is { } security)
                    {
                        handler = RequestAuthorization.Wrap(handler, access, route.Template, security.Authorizer);
                    }
                    builder.Add(route.Template, route.Method, handler);
                }
            }
        }
        return builder.Build();
    }

    /// <summary>The classes of <paramref name="assemblies"/> that have <c>[Route]</c> methods (a scan of every type).</summary>
    public static IEnumerable<Type> HandlerTypesIn(IEnumerable<Assembly> assemblies) =>
        assemblies.Distinct().SelectMany(a => a.GetTypes())
            .Where(type => type.IsClass && !type.IsAbstract
                && type.GetMethods(BindingFlags.Instance | BindingFlags.Public | BindingFlags.DeclaredOnly).Any(method => method.IsDefined(typeof(RouteAttribute))));

    /// <summary>Every route of <paramref name="assemblies"/> with the access it declares (null: none), for the route-table check.</summary>
    public static IReadOnlyList<(string Method, string Template, RouteAccess? Access)> Routes(IEnumerable<Assembly> assemblies) =>
        HandlerTypesIn(assemblies)
            .SelectMany(type => type.GetMethods(BindingFlags.Instance | BindingFlags.Public | BindingFlags.DeclaredOnly))
            .SelectMany(method => method.GetCustomAttributes<RouteAttribute>().Select(route => (route.Method, route.Template, AccessAttribute.For(method, route.Template))))
            .OrderBy(r => r.Template, StringComparer.Ordinal).ThenBy(r => r.Method, StringComparer.Ordinal)
            .ToList();
}
