import { applyDecorators, CanActivate, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { ApiConsumes, ApiUnsupportedMediaTypeResponse } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { ProblemError, sendProblem } from './problem';

/** JSON nested deeper than this is refused (contract 13). */
export const MAX_JSON_DEPTH = 32;

const unsupportedMediaType = (detail: string) => ({ type: 'about:blank', title: 'Unsupported Media Type', status: 415, detail });

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Every request body is JSON, except on the paths given (the OpenID Connect form_post callback):
 * anything else is 415 before a parser runs. A cross-site HTML form can only send form or text
 * bodies, so a route that never parses them cannot be driven by one (login CSRF, contract 13).
 */
export function refuseNonJsonBodies(formPaths: string[]) {
  const allowed = new Set(formPaths.map((path) => path.toLowerCase()));
  return (req: Request, res: Response, next: NextFunction): void => {
    if (hasBody(req) && !req.is('application/json') && !allowed.has(req.path.toLowerCase())) {
      sendProblem(res, unsupportedMediaType('The request body must be application/json.'));
      return;
    }
    next();
  };
}

/** The nesting depth of a parsed JSON value, counted without recursion; stops once past `limit`. */
export function jsonDepthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Object.values(current as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * Refuses a JSON body nested deeper than MAX_JSON_DEPTH with a 400 problem, right after parsing and
 * before anything recursive (class-transformer, class-validator) sees it: those would overflow the
 * stack and answer 500 (contract 13). Nothing is logged: it is the caller's mistake, not ours.
 */
export function refuseDeepJson(req: Request, res: Response, next: NextFunction): void {
  if (req.body !== undefined && jsonDepthExceeds(req.body, MAX_JSON_DEPTH)) {
    sendProblem(res, {
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
    });
    return;
  }
  next();
}

/**
 * For sign-in and change-password routes: the body must be declared application/json, even when
 * empty (contract 13). Guards run before pipes, so this answers 415 before any validation.
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const type = context.switchToHttp().getRequest<Request>().headers['content-type'] ?? '';
    if (type.split(';')[0].trim().toLowerCase() !== 'application/json') {
      throw new ProblemError(415, 'Unsupported Media Type', 'The request body must be application/json.');
    }
    return true;
  }
}

/** Marks a route whose body must be application/json (sign-in, change-password), and documents it. */
export const JsonBodyOnly = () =>
  applyDecorators(
    UseGuards(JsonBodyGuard),
    ApiConsumes('application/json'),
    ApiUnsupportedMediaTypeResponse({ description: 'The body is not application/json (a cross-site form cannot sign anyone in).' }),
  );
