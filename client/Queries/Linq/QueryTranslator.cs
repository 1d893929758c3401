using System.Linq.Expressions;
using System.Reflection;
using System.Text.RegularExpressions;

namespace Jackdaw.Client.Queries.Linq;

/// <summary>
/// Reads a query's chain of LINQ operators, from <c>session.Query&lt;T&gt;()</c> outwards, into a
/// <see cref="QueryModel"/>. What RQL cannot say throws <see cref="NotSupportedException"/> naming
/// the operator: Join, Distinct and the like; a Where or OrderBy after Skip/Take (it would
/// filter or sort one page) or after Select. <c>GroupBy</c> followed by a <c>Select</c> of the key,
/// <c>Count()</c> and <c>Sum(...)</c> is a group-by query (<see cref="QueryTranslator"/>'s GroupBy part),
/// which a Where or ordering after that Select filters and sorts by the Select's members.
/// </summary>
internal static partial class QueryTranslator
{
    public static QueryModel Translate(Expression expression, IQueryProvider provider, DocumentConventions conventions, string from)
    {
        var calls = new List<MethodCallExpression>();
        var current = expression;
        while (current is MethodCallExpression call && call.Arguments.Count > 0)
        {
            calls.Add(call);
            current = call.Arguments[0];
        }

        if (current is not ConstantExpression { Value: IQueryable root } || root.Provider != provider)
        {
            throw new NotSupportedException($"'{current}' is not a Jackdaw query; a query starts at session.Query<T>().");
        }

        calls.Reverse();
        var model = new QueryModel(from);
        var translation = new Translation(model, new FieldPathResolver(conventions));
        foreach (var call in calls)
        {
            translation.Apply(call);
        }

        if (model.GroupBy.Count > 0 && model.Projection is null)
        {
            throw new NotSupportedException("GroupBy must be followed by a Select of its key, Count() and Sum(...) (g => new { g.Key, Count = g.Count() }): the server answers groups' totals, not the groups' documents.");
        }

        return model;
    }

    [GeneratedRegex(@"^[\p{L}_@][\p{L}\p{Nd}_@]*(\[\])?(\.[\p{L}_@][\p{L}\p{Nd}_@]*(\[\])?)*$")]
    private static partial Regex PlainPath();

    private sealed partial class Translation(QueryModel model, FieldPathResolver fields)
    {
        private bool _paged;
        private bool _projected;

        // What a lambda's parameter stands for: the document, or after a group-by Select of one
        // value (g => g.Count()) the result's field that holds it.
        private FieldPath _resultRoot = FieldPath.Root;

        public void Apply(MethodCallExpression call)
        {
            var method = call.Method;
            if (method.DeclaringType == typeof(QueryMarkers))
            {
                ApplyMarker(call);
                return;
            }

            if (method.DeclaringType != typeof(Queryable))
            {
                throw new NotSupportedException($"{method.DeclaringType?.Name}.{method.Name} cannot be part of a Jackdaw query.");
            }

            switch (method.Name)
            {
                case nameof(Queryable.GroupBy):
                    GroupBy(call);
                    return;
                case nameof(Queryable.Where):
                    if (!OnGroupResults("Where", "it would filter one page of results"))
                    {
                        RequireBeforePagingAndSelect("Where", "it would filter one page of results, or the projected values");
                    }

                    model.AddWhere(Translate(Lambda(call, "Where"), lambda =>
                    {
                        NoteDocumentFields(lambda, "Where");
                        return new WhereTranslator(fields, model.Parameters).Translate(lambda.Body);
                    }));
                    return;
                case nameof(Queryable.OrderBy) or nameof(Queryable.OrderByDescending):
                    if (!OnGroupResults(method.Name, "it would sort one page of results"))
                    {
                        RequireBeforePagingAndSelect(method.Name, "it would sort one page of results, or the projected values");
                    }

                    model.OrderBy.Clear();
                    model.OrderBy.Add(OrderBy(call));
                    return;
                case nameof(Queryable.ThenBy) or nameof(Queryable.ThenByDescending):
                    if (!OnGroupResults(method.Name, "it would sort one page of results"))
                    {
                        RequireBeforePagingAndSelect(method.Name, "it would sort one page of results, or the projected values");
                    }

                    model.OrderBy.Add(OrderBy(call));
                    return;
                case nameof(Queryable.Skip) when call.Arguments[1].Type == typeof(int):
                    var skip = Count(call);
                    model.Skip += skip;
                    if (model.Take is { } taken)
                    {
                        model.Take = Math.Max(0, taken - skip);
                    }

                    _paged = true;
                    return;
                case nameof(Queryable.Take) when call.Arguments[1].Type == typeof(int):
                    var take = Count(call);
                    model.Take = model.Take is { } previous ? Math.Min(previous, take) : take;
                    _paged = true;
                    return;
                case nameof(Queryable.Select):
                    if (_projected)
                    {
                        throw new NotSupportedException("A second Select cannot be translated: RQL projects once. Combine both into one Select.");
                    }

                    model.Projection = Translate(Lambda(call, "Select"), ProjectionOf);
                    _projected = model.Projection is not null;
                    return;
                default:
                    throw new NotSupportedException($"The LINQ operator {method.Name} is not supported by Jackdaw queries. Supported: Where, OrderBy(Descending), ThenBy(Descending), Skip, Take, Select, GroupBy (then Select), and Jackdaw's Search, Include, Customize and Statistics.");
            }
        }

        private void ApplyMarker(MethodCallExpression call)
        {
            var argument = ((ConstantExpression)call.Arguments[1]).Value;
            switch (call.Method.Name)
            {
                case nameof(QueryMarkers.Customize):
                    ((Action<IDocumentQueryCustomization>)argument!)(model.Customization);
                    return;
                case nameof(QueryMarkers.Statistics):
                    model.Statistics.Add((QueryStatistics)argument!);
                    return;
                case nameof(QueryMarkers.IncludePath):
                    RequireBeforeSelect("Include");
                    var path = (string)argument!;
                    model.Includes.Add(PlainPath().IsMatch(path) ? path : Rql.Quote(path));
                    return;
                case nameof(QueryMarkers.IncludeMember):
                    RequireBeforeSelect("Include");
                    model.Includes.Add(Translate((LambdaExpression)argument!, lambda => fields.Resolve(lambda.Body, "Include")).ToRql());
                    return;
                case nameof(QueryMarkers.Search):
                    RequireNotGrouped("Search");
                    RequireBeforePagingAndSelect("Search", "it would search one page of results, or the projected values");
                    var field = Translate((LambdaExpression)argument!, lambda =>
                    {
                        NoteDocumentFields(lambda, "Search");
                        return fields.Resolve(lambda.Body, "Search");
                    });
                    var terms = (string)((ConstantExpression)call.Arguments[2]).Value!;
                    var all = (SearchOperator)((ConstantExpression)call.Arguments[3]).Value! == SearchOperator.And;
                    model.AddSearch(Condition.Atom($"search({field.ToRql()}, {model.Parameters.Add(terms)}{(all ? ", and" : "")})"));
                    return;
            }
        }

        /// <summary>Runs <paramref name="translate"/> with the lambda's parameter bound to the document.</summary>
        private TResult Translate<TResult>(LambdaExpression lambda, Func<LambdaExpression, TResult> translate)
        {
            var parameter = lambda.Parameters[0];
            fields.Bind(parameter, _resultRoot);
            try
            {
                return translate(lambda);
            }
            finally
            {
                fields.Unbind(parameter);
            }
        }

        /// <summary>
        /// <c>order by Field</c>, typed for numbers as RavenDB sends it (<c>as long</c> for integral
        /// types, <c>as double</c> for the others), so 10 sorts after 9.
        /// </summary>
        private string OrderBy(MethodCallExpression call)
        {
            if (call.Arguments.Count != 2)
            {
                throw new NotSupportedException($"{call.Method.Name} with a comparer cannot be translated: the server sorts by its own rules.");
            }

            var lambda = Lambda(call, call.Method.Name);
            var field = Translate(lambda, l => fields.Resolve(l.Body, call.Method.Name));
            var type = FieldPathResolver.FieldType(lambda.Body);
            var text = field.ToRql();
            if (type == typeof(int) || type == typeof(long) || type == typeof(short) || type == typeof(byte)
                || type == typeof(sbyte) || type == typeof(uint) || type == typeof(ushort) || type == typeof(ulong))
            {
                text += " as long";
            }
            else if (type == typeof(double) || type == typeof(float) || type == typeof(decimal))
            {
                text += " as double";
            }

            return call.Method.Name.EndsWith("Descending", StringComparison.Ordinal) ? text + " desc" : text;
        }

        /// <summary>The projection of a Select; null for <c>x => x</c> (or <c>x => (object)x</c>).</summary>
        private Projection? ProjectionOf(LambdaExpression lambda)
        {
            var body = lambda.Body;
            if (body == lambda.Parameters[0] || body is UnaryExpression { NodeType: ExpressionType.Convert, Operand: var operand } && operand == lambda.Parameters[0])
            {
                return null;
            }

            var projection = new Projection();
            if (_groupKeys is not null)
            {
                return GroupProjection(lambda, projection);
            }

            switch (body)
            {
                case NewExpression created:
                    AddConstructorArguments(projection, created);
                    return projection;
                case MemberInitExpression initialized:
                    AddConstructorArguments(projection, initialized.NewExpression);
                    foreach (var binding in initialized.Bindings)
                    {
                        if (binding is not MemberAssignment assignment)
                        {
                            throw new NotSupportedException($"Select: the member binding '{binding}' cannot be translated; assign each member a document field (new Dto {{ City = x.ShipTo.City }}).");
                        }

                        AddField(projection, fields.JsonName(initialized.Type, assignment.Member), assignment.Expression);
                    }

                    return projection;
                default:
                    var field = ProjectedField(body);
                    if (field.IsId)
                    {
                        projection.SingleIsId = true;
                    }
                    else
                    {
                        projection.SingleField = field.LastName;
                        projection.Fields.Add((field, field.LastName));
                    }

                    return projection;
            }
        }

        private void AddConstructorArguments(Projection projection, NewExpression created)
        {
            var parameters = created.Constructor?.GetParameters() ?? [];
            for (var i = 0; i < created.Arguments.Count; i++)
            {
                string alias;
                if (created.Members is { } members)
                {
                    // An anonymous type: each argument initializes the property of the same position.
                    var member = members[i] is MethodInfo { Name: var getter } && getter.StartsWith("get_", StringComparison.Ordinal)
                        ? created.Type.GetProperty(getter[4..])!
                        : members[i];
                    alias = fields.JsonName(created.Type, member);
                }
                else
                {
                    // A constructor: the parameter fills the property of its name, as the serializer binds them.
                    var name = parameters[i].Name;
                    var property = created.Type.GetProperties().FirstOrDefault(p => string.Equals(p.Name, name, StringComparison.OrdinalIgnoreCase))
                        ?? throw new NotSupportedException($"Select: {created.Type.Name}'s constructor parameter '{name}' has no property of that name, so its value cannot be projected.");
                    alias = fields.JsonName(created.Type, property);
                }

                AddField(projection, alias, created.Arguments[i]);
            }
        }

        private void AddField(Projection projection, string alias, Expression value)
        {
            if (_groupKeys is not null)
            {
                AddGroupItem(projection, alias, value);
                return;
            }

            var field = ProjectedField(value);
            if (field.IsId)
            {
                projection.IdAlias = alias;
            }
            else
            {
                projection.Fields.Add((field, alias));
            }
        }

        private FieldPath ProjectedField(Expression value)
        {
            if (fields.TryResolve(value, out var field) && !field.IsRoot)
            {
                return field;
            }

            throw new NotSupportedException($"Select: '{value}' is not a document field. A projection copies fields (new {{ x.Company, City = x.ShipTo.City }}); it cannot compute values or nest objects.");
        }

        private void RequireBeforePagingAndSelect(string what, string why)
        {
            RequireBeforeSelect(what);
            if (_paged)
            {
                throw new NotSupportedException($"{what} after Skip or Take cannot be translated: {why}. Put it before Skip and Take.");
            }
        }

        private void RequireBeforeSelect(string what)
        {
            if (_projected)
            {
                throw new NotSupportedException($"{what} after Select cannot be translated: RQL filters, sorts and includes documents, not projections. Put it before Select.");
            }
        }

        private static LambdaExpression Lambda(MethodCallExpression call, string what) =>
            FieldPathResolver.StripQuote(call.Arguments[1]) is LambdaExpression { Parameters.Count: 1 } lambda
                ? lambda
                : throw new NotSupportedException($"{what} with an element index cannot be translated; use the overload without the index.");

        private static long Count(MethodCallExpression call)
        {
            // As LINQ to objects: a negative count means none.
            return Math.Max(0, (int)ExpressionValues.Evaluate(call.Arguments[1])!);
        }
    }
}
