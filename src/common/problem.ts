import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
  ValidationError,
} from '@nestjs/common';
import type { Response } from 'express';
import { messageOf } from './errors';

export interface FieldProblem {
  field: string;
  message: string;
}

/** The one error shape of the service (contract 2), sent as application/problem+json. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  code?: string;
  errors?: FieldProblem[];
}

/**
 * A domain error that maps to a problem answer. Services throw these; the global filter writes them.
 * `headers` are added to the answer (for example WWW-Authenticate).
 */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail?: string,
    readonly extra: { code?: string; errors?: FieldProblem[]; headers?: Record<string, string> } = {},
  ) {
    super(detail ?? title);
  }
}

export const badRequest = (detail: string, errors?: FieldProblem[]) =>
  new ProblemError(400, 'Bad Request', detail, { errors });
export const unauthorized = (detail = 'Authentication is required.', headers?: Record<string, string>) =>
  new ProblemError(401, 'Unauthorized', detail, { headers });
export const forbidden = (detail = 'You do not have permission for this.') => new ProblemError(403, 'Forbidden', detail);
export const notFound = (detail = 'Not found.') => new ProblemError(404, 'Not Found', detail);
export const conflict = (detail: string) => new ProblemError(409, 'Conflict', detail);
export const serviceUnavailable = (detail = 'The service cannot answer right now.') =>
  new ProblemError(503, 'Service Unavailable', detail);

/** Flattens class-validator errors to `{ field, message }` rows, nested fields dotted. */
export function fieldProblems(errors: ValidationError[], parent = ''): FieldProblem[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...fieldProblems(error.children ?? [], field)];
  });
}

/** ValidationPipe exceptionFactory: one 400 listing every broken rule. */
export function validationFailed(errors: ValidationError[]): ProblemError {
  return badRequest('The request is not valid.', fieldProblems(errors));
}

export function sendProblem(res: Response, problem: Problem, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}

const STATUS_TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** Seconds a client is asked to wait after a 503 caused by an unreachable dependency. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Turns anything thrown into a problem answer. A 500 says nothing internal; the cause is logged.
 * `unavailable` recognises the errors of a dependency that could not be reached in time (the database
 * during an outage): those are answered 503, the honest answer, never 500.
 */
export function toProblem(
  exception: unknown,
  unavailable: (error: unknown) => boolean = () => false,
): { problem: Problem; headers: Record<string, string> } {
  if (exception instanceof ProblemError) {
    const problem: Problem = { type: 'about:blank', title: exception.title, status: exception.status };
    if (exception.detail) problem.detail = exception.detail;
    if (exception.extra.code) problem.code = exception.extra.code;
    if (exception.extra.errors) problem.errors = exception.extra.errors;
    return { problem, headers: exception.extra.headers ?? {} };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const body = exception.getResponse();
    const title = STATUS_TITLES[status] ?? exception.name;
    const problem: Problem = { type: 'about:blank', title, status };
    if (status < 500) {
      const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : body;
      if (typeof message === 'string') problem.detail = message;
      else if (Array.isArray(message)) problem.detail = message.map(String).join('; ');
    }
    return { problem, headers: {} };
  }
  if (unavailable(exception)) {
    return {
      problem: { type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'A service this request needs did not answer in time; try again shortly.' },
      headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
    };
  }
  const status = httpStatusOf(exception);
  if (status !== null) {
    return { problem: { type: 'about:blank', title: STATUS_TITLES[status] ?? 'Bad Request', status }, headers: {} };
  }
  return {
    problem: { type: 'about:blank', title: 'Internal Server Error', status: HttpStatus.INTERNAL_SERVER_ERROR },
    headers: {},
  };
}

/** body-parser and friends throw plain errors carrying a 4xx status. */
function httpStatusOf(exception: unknown): number | null {
  if (typeof exception !== 'object' || exception === null) return null;
  const status = (exception as { status?: unknown; statusCode?: unknown }).status ?? (exception as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}

@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('Problem');

  /** `unavailable`: see toProblem. */
  constructor(private readonly unavailable: (error: unknown) => boolean = () => false) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') return;
    const res = host.switchToHttp().getResponse<Response>();
    // A 503 the service chose (a credential it could not check) or an unreachable dependency: an
    // outage refuses every request, so one constant warning (the logger counts repeats), no stack.
    const refused = this.unavailable(exception) || (exception instanceof ProblemError && exception.status === 503);
    const { problem, headers } = toProblem(exception, this.unavailable);
    if (refused) {
      this.logger.warn(`answered 503, a dependency did not answer in time: ${messageOf(exception)}`);
    } else if (problem.status >= 500) {
      this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    }
    sendProblem(res, problem, headers);
  }
}

