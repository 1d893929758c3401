namespace Jackdaw.Server.Hosting;

/// <summary>
/// Names an assembly's handler classes, so that <see cref="RouteDiscovery"/> need not scan the
/// assembly for them at startup: <see cref="System.Reflection.Assembly.GetTypes"/> over the server's
/// ~1,200 types and their methods took 30-75 ms of every start (perf/RESULTS.md, "Performance pass
/// (issue 33)"). The server's list is in <c>Handlers/RouteHandlers.cs</c>, an assembly attribute so
/// that Hosting still names no handler; RouteDiscoveryTests fails when a class with <c>[Route]</c>
/// methods is missing from it. An assembly without it is scanned (tests' own handlers).
/// </summary>
[AttributeUsage(AttributeTargets.Assembly, AllowMultiple = false)]
public sealed class RouteHandlersAttribute(params Type[] types) : Attribute
{
    public IReadOnlyList<Type> Types { get; } = types;
}
